/**
 * A boxed table for rollup rows, drawn in one pass. cli-table3 measures every cell with
 * string-width and needs minutes for a year of 300 s buckets (105,120 rows); this renderer
 * only handles what rollup tables contain (single-line cells, no wide characters in data
 * cells) and stays linear.
 */

import { escapeText } from './terminal-text.js';

export type Align = 'left' | 'right';

export interface TableColumn {
  header: string;
  align: Align;
  /** The text of each row's cell; `paint` (optional) colours it after padding. */
  cells: string[];
  paint?: (text: string, row: number) => string;
}

export interface TableOptions {
  /** Colour for the header row, e.g. bold. */
  paintHeader?: (text: string) => string;
  paintBorder?: (text: string) => string;
}

/** Width of text in terminal columns, ignoring ANSI colour. Good enough for our cells (no CJK). */
export function displayWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  const plain = text.includes('\u001b') ? text.replace(/\u001b\[[0-9;]*m/g, '') : text;
  let n = 0;
  for (const _ of plain) n++;
  return n;
}

function pad(text: string, width: number, align: Align): string {
  const gap = width - displayWidth(text);
  if (gap <= 0) return text;
  return align === 'right' ? ' '.repeat(gap) + text : text + ' '.repeat(gap);
}

/** Renders the table as lines (no trailing newline on each). */
export function renderTable(columns: readonly TableColumn[], opts: TableOptions = {}): string[] {
  const border = opts.paintBorder ?? ((s: string) => s);
  const head = opts.paintHeader ?? ((s: string) => s);
  const rows = columns.reduce((n, c) => Math.max(n, c.cells.length), 0);
  // Headers may name a series or a node; the data cells are numbers and times this program formatted.
  const headers = columns.map((c) => escapeText(c.header));
  const widths = columns.map((c, i) => {
    let w = displayWidth(headers[i]!);
    for (const cell of c.cells) {
      const len = cell.length; // data cells are ASCII or single-width symbols
      if (len > w) w = len;
    }
    return w;
  });
  const rule = (l: string, m: string, r: string): string => border(l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r);
  const bar = border('│');
  const SPACES = ' '.repeat(Math.max(0, ...widths));
  const out: string[] = [];
  out.push(rule('┌', '┬', '┐'));
  out.push(bar + columns.map((c, i) => ` ${head(pad(headers[i]!, widths[i]!, c.align))} `).join(bar) + bar);
  out.push(rule('├', '┼', '┤'));
  for (let r = 0; r < rows; r++) {
    let line = bar;
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!;
      const cell = c.cells[r] ?? '';
      const gap = widths[i]! - cell.length;
      const text = gap <= 0 ? cell : c.align === 'right' ? SPACES.slice(0, gap) + cell : cell + SPACES.slice(0, gap);
      line += ` ${c.paint ? c.paint(text, r) : text} ${bar}`;
    }
    out.push(line);
  }
  out.push(rule('└', '┴', '┘'));
  return out;
}
