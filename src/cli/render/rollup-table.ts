/**
 * A boxed table for rollup rows, drawn in one pass. cli-table3 measures every cell with
 * string-width and needs minutes for a year of 300 s buckets (105,120 rows); this renderer
 * only handles what rollup tables contain (single-line cells, no wide characters in data
 * cells) and stays linear.
 */

import { displayWidth, escapeText } from './terminal-text.js';

export type CellAlign = 'left' | 'right';

export interface TableColumn {
  header: string;
  align: CellAlign;
  /** The text of each row's cell; `paint` (optional) colours it after padding. */
  cells: string[];
  paint?: (text: string, row: number) => string;
}

export interface RollupTableOptions {
  /** Colour for the header row, e.g. bold. */
  paintHeader?: (text: string) => string;
  paintBorder?: (text: string) => string;
  /**
   * The terminal's width (tableWidth(ctx)): headers wider than their column's cells (node URLs
   * over numbers) are wrapped onto more lines until the table fits. Cells never are: a number
   * cut in two would read as two numbers. Absent (a pipe, a file): natural widths.
   */
  width?: number | undefined;
}

/** A header is never wrapped narrower than this (or its own width, when less). */
const MIN_HEADER_WIDTH = 8;

/** Splits a header into lines of at most `width` columns: at spaces where it can, else inside the word. */
export function wrapHeader(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    let rest = word;
    if (line !== '' && displayWidth(line) + 1 + displayWidth(rest) > width) {
      lines.push(line);
      line = '';
    }
    if (line !== '') line += ' ';
    while (displayWidth(line) + displayWidth(rest) > width) {
      const chars = [...rest];
      const room = width - displayWidth(line);
      lines.push(line + chars.slice(0, room).join(''));
      line = '';
      rest = chars.slice(room).join('');
    }
    line += rest;
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/**
 * Column widths that fit `total` terminal columns by narrowing headers down to their cells' width
 * (never below MIN_HEADER_WIDTH): the largest common cap on header widths that fits.
 */
export function fitHeaders(headerWidths: readonly number[], cellWidths: readonly number[], total: number): number[] {
  const borders = headerWidths.length * 3 + 1;
  const at = (cap: number): number[] => headerWidths.map((h, i) => Math.max(cellWidths[i]!, Math.min(h, Math.max(cap, MIN_HEADER_WIDTH))));
  const sum = (w: number[]): number => w.reduce((a, b) => a + b, 0) + borders;
  if (sum(at(Infinity)) <= total) return at(Infinity);
  let lo = MIN_HEADER_WIDTH;
  let hi = Math.max(MIN_HEADER_WIDTH, ...headerWidths);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sum(at(mid)) <= total) lo = mid;
    else hi = mid - 1;
  }
  return at(lo);
}

function pad(text: string, width: number, align: CellAlign): string {
  const gap = width - displayWidth(text);
  if (gap <= 0) return text;
  return align === 'right' ? ' '.repeat(gap) + text : text + ' '.repeat(gap);
}

/** Renders the table as lines (no trailing newline on each). */
export function renderRollupTable(columns: readonly TableColumn[], opts: RollupTableOptions = {}): string[] {
  const border = opts.paintBorder ?? ((s: string) => s);
  const head = opts.paintHeader ?? ((s: string) => s);
  const rows = columns.reduce((n, c) => Math.max(n, c.cells.length), 0);
  // Headers may name a series or a node; the data cells are numbers and times this program formatted.
  const headers = columns.map((c) => escapeText(c.header));
  const cellWidths = columns.map((c) => {
    let w = 0;
    for (const cell of c.cells) {
      const len = cell.length; // data cells are ASCII or single-width symbols
      if (len > w) w = len;
    }
    return w;
  });
  const headerWidths = headers.map((h) => displayWidth(h));
  const widths = opts.width === undefined ? headerWidths.map((h, i) => Math.max(h, cellWidths[i]!)) : fitHeaders(headerWidths, cellWidths, opts.width);
  const headLines = headers.map((h, i) => (headerWidths[i]! > widths[i]! ? wrapHeader(h, widths[i]!) : [h]));
  const headRows = Math.max(...headLines.map((l) => l.length));
  const rule = (l: string, m: string, r: string): string => border(l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r);
  const bar = border('│');
  const SPACES = ' '.repeat(Math.max(0, ...widths));
  const out: string[] = [];
  out.push(rule('┌', '┬', '┐'));
  for (let l = 0; l < headRows; l++) out.push(bar + columns.map((c, i) => ` ${head(pad(headLines[i]![l] ?? '', widths[i]!, c.align))} `).join(bar) + bar);
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
