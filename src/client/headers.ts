/**
 * Extra request headers (auth, routing) and keeping their secrets out of logs, error messages
 * and JSON output. Pure functions: no I/O, no undici.
 */
import { TsnodeError } from '../tsnode-error.js';

/** RFC 9110 token characters: what a header name may consist of. */
const TOKEN_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Always redacted, whatever `--redact` says. */
export const ALWAYS_REDACTED = ['authorization', 'cookie', 'proxy-authorization'] as const;

/** Names that look like they carry a secret are redacted too (belt and braces at 3 a.m.). */
const SECRET_NAME_RE = /(token|secret|passw(or)?d|api-?key|credential|session)/i;

/** Headers the HTTP layer manages itself; setting them by hand breaks framing or is refused by undici. */
export const MANAGED_HEADERS = ['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer'] as const;

export const REDACTED = '[redacted]';

/** Why a header given by the user cannot be sent. `field` names where it came from (`--header`, `TSNODE_HEADERS`). */
export class HeaderError extends TsnodeError {
  declare readonly code: 'invalid_header';
  readonly field: string;
  readonly value: string;
  constructor(field: string, value: string, reason: string) {
    // The value may be a secret: show only the part before the colon (the name).
    super('invalid_header', `${field}: ${reason}`);
    this.name = 'HeaderError';
    this.field = field;
    this.value = value;
  }
}

/** Quotes a header name for a message; never the value. */
function quoteName(name: string): string {
  return JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
}

/** Checks one header name and value; throws HeaderError naming the field (never echoing the value). */
export function validateHeader(name: string, value: string, field = 'header'): void {
  if (name === '') throw new HeaderError(field, name, 'the header name is empty (expected "Name: value")');
  if (!TOKEN_RE.test(name)) {
    throw new HeaderError(field, name, `${quoteName(name)} is not a valid header name (letters, digits and !#$%&'*+.^_\`|~- only)`);
  }
  if ((MANAGED_HEADERS as readonly string[]).includes(name.toLowerCase())) {
    throw new HeaderError(field, name, `${quoteName(name)} is managed by the HTTP layer and cannot be set by hand`);
  }
  // CR, LF and NUL would split or truncate the request (header injection); other controls except tab are invalid.
  if (/[\r\n\0]/.test(value)) throw new HeaderError(field, name, `the value of ${quoteName(name)} contains a line break or NUL`);
  // eslint-disable-next-line no-control-regex
  if (/[\x01-\x08\x0b-\x1f\x7f]/.test(value)) throw new HeaderError(field, name, `the value of ${quoteName(name)} contains a control character`);
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\xff]/.test(value)) throw new HeaderError(field, name, `the value of ${quoteName(name)} contains non-Latin-1 characters (encode it first)`);
}

/** Parses `Name: value` (value trimmed; may be empty). */
export function parseHeaderLine(line: string, field = '--header'): [string, string] {
  const colon = line.indexOf(':');
  if (colon < 0) {
    const shown = line.length > 40 ? `${line.slice(0, 40)}…` : line;
    // No colon: it may be a bare secret pasted by mistake; show it only if it is short and looks like a name.
    const safe = TOKEN_RE.test(shown) && shown.length <= 40 ? ` (${JSON.stringify(shown)})` : '';
    throw new HeaderError(field, line, `expected "Name: value"${safe}, found no colon`);
  }
  const name = line.slice(0, colon).trim();
  const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
  validateHeader(name, value, field);
  return [name, value];
}

/**
 * Splits TSNODE_HEADERS: one header per line, or `;`-separated on one line. A `;` only separates
 * when a new `Name:` follows it, so `Cookie: a=1; b=2` stays one header.
 */
export function splitHeaderList(text: string): string[] {
  const lines = /[\r\n]/.test(text) ? text.split(/\r?\n/) : text.split(/;\s*(?=[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:)/);
  return lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * Merges header lines into one record: the env list first, then the flags (a later header of
 * the same name, case-insensitive, replaces an earlier one).
 */
export function buildHeaders(sources: ReadonlyArray<{ field: string; lines: readonly string[] }>): Record<string, string> {
  const byLower = new Map<string, [string, string]>();
  for (const { field, lines } of sources) {
    lines.forEach((line, i) => {
      const [name, value] = parseHeaderLine(line, lines.length > 1 && field !== '--header' ? `${field} item ${i + 1}` : field);
      byLower.set(name.toLowerCase(), [name, value]);
    });
  }
  return Object.fromEntries(byLower.values());
}

/** Whether a header's value must never be shown. `extra` are the user's `--redact` names. */
export function isSecretHeader(name: string, extra: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return (ALWAYS_REDACTED as readonly string[]).includes(lower) || extra.some((e) => e.toLowerCase() === lower) || SECRET_NAME_RE.test(lower);
}

/** A copy with every secret header's value replaced by `[redacted]`; safe to log or print. */
export function redactHeaders<V extends string | string[] | undefined>(headers: Readonly<Record<string, V>>, extra: readonly string[] = []): Record<string, V | typeof REDACTED> {
  const out: Record<string, V | typeof REDACTED> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = isSecretHeader(name, extra) ? REDACTED : value;
  return out;
}

/** The secret values among `headers` (for scrubbing them out of messages); short values are skipped. */
export function secretValues(headers: Readonly<Record<string, string>> | undefined, extra: readonly string[] = []): string[] {
  if (!headers) return [];
  const out = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!isSecretHeader(name, extra)) continue;
    if (value.length >= 4) out.add(value);
    // `Bearer abc...`: also the credential alone, in case a node echoes only that part.
    const cred = /^\S+\s+(\S{4,})$/.exec(value)?.[1];
    if (cred) out.add(cred);
  }
  // Longest first, so a value containing another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of the secrets in `text` by `[redacted]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

// `//user:password@`: the authority's userinfo, up to the last `@` before the host (a password may hold an `@`).
const URL_USERINFO = /\/\/[^\s/?#]*@/g;

/** `text` with the credentials of every URL in it (`https://user:pass@host`) replaced by `[redacted]`. */
export function redactUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(URL_USERINFO, `//${REDACTED}@`) : text;
}
