/**
 * Text from a node (metric names, error messages, anything in an answer) made harmless for a
 * terminal. Used by the sinks (the logger, the table renderers, the progress renderer), so no
 * call site has to remember it. JSON output never goes through here: JSON escapes by itself.
 *
 * Every control character is shown as a visible escape (`\x1b`, `\r`, `\n`, `\u202e`): a node
 * cannot retitle the window, clear the screen, move the cursor to overwrite a line, start a
 * line of its own, or reorder what follows with a bidirectional override. Backslashes are left
 * alone, so escaping twice changes nothing (a sink may receive text another sink escaped).
 */

// C0 controls (tab and newline included: one line of output stays one line), DEL, C1 controls
// (0x9b is a one-byte CSI on some terminals), the Unicode line/paragraph separators, and the
// bidirectional marks, embeddings, overrides and isolates.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Whether `text` holds anything the terminal would act on rather than show. */
export function hasUnsafe(text: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(text);
  UNSAFE.lastIndex = 0;
  return found;
}

/** `text` with every control character replaced by a visible escape. For one cell or one field. */
export function escapeText(text: string): string {
  return hasUnsafe(text) ? text.replace(UNSAFE, visible) : text;
}

// One SGR (colour/style) sequence, as our painter writes them: ESC [ digits and semicolons m.
// eslint-disable-next-line no-control-regex
const SGR_RUN_START = /^(?:\u001b\[[0-9;]*m)+/;
// eslint-disable-next-line no-control-regex
const SGR_RUN_END = /(?:\u001b\[[0-9;]*m)+$/;

/**
 * One log line. With `keepStyle`, colour codes that wrap the whole line (what `paint.red(line)`
 * produces) survive; everything inside the line is escaped like {@link escapeText}, so a node's
 * own colour codes in the middle of a message show as text, and a reset follows any style kept
 * so nothing bleeds into the next line.
 */
export function escapeLine(line: string, keepStyle: boolean): string {
  if (!hasUnsafe(line)) return line;
  if (!keepStyle) return escapeText(line);
  const head = SGR_RUN_START.exec(line)?.[0] ?? '';
  const rest = line.slice(head.length);
  const tail = SGR_RUN_END.exec(rest)?.[0] ?? '';
  const body = rest.slice(0, rest.length - tail.length);
  const styled = head !== '' || tail !== '';
  return `${head}${escapeText(body)}${tail}${styled ? '\u001b[0m' : ''}`;
}

// Any CSI sequence (colour, cursor moves): ESC [ parameters, then a letter.
// eslint-disable-next-line no-control-regex
const CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/**
 * Width of one line of text in terminal columns, ignoring escape sequences: one column per code
 * point (good enough for what tsnode prints: no CJK or emoji). The one width measure of render/.
 */
export function displayWidth(text: string): number {
  const plain = text.includes('\u001b') ? text.replace(CSI, '') : text;
  let n = 0;
  for (const _ of plain) n++;
  return n;
}
