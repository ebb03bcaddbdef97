/**
 * Text a node sent (versions, identities, error messages), made safe for a terminal: control
 * characters (escape sequences among them) are shown as \uXXXX instead of acting on the screen.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
