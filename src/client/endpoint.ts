/** How a node's URL and a ring's addresses are compared and shown, the same way everywhere in client/. */

/** host:port of a URL, lower case, default port filled in: matches a listed URL to a ring node's address. */
export function endpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname.toLowerCase().replace(/^\[|\]$/g, '')}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return url.toLowerCase();
  }
}

/** A topology hash as shown in messages: its first 12 hex digits, enough to tell rings apart. */
export const shortHash = (hash: string): string => hash.slice(0, 12);
