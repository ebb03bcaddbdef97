import type TableT from 'cli-table3';
import { createRequire } from 'node:module';
import { csvRow } from './csv.js';
import { painter } from './painter.js';
import { displayWidth, escapeText } from './terminal-text.js';

/** How one column lines up; numbers usually read best right-aligned. */
export type Align = 'left' | 'right' | 'center';

/** A cell: plain text, a number, or nothing (rendered as an empty cell). */
export type CellValue = string | number | boolean | null | undefined;

export interface TableOptions {
  /** Colour the header (and any `paint`ed cells); pass ctx.colour for stdout tables. */
  colour: boolean;
  /** Per-column alignment, by index; missing entries are left-aligned. */
  align?: readonly (Align | undefined)[];
  /**
   * Optional per-cell colouring, applied only when `colour` is on, e.g. red for `failed`.
   * Receives the painter so callers never need one of their own.
   */
  paint?: (cell: string, column: number, row: number, p: ReturnType<typeof painter>) => string;
  /** Compact: no separator line between rows (the default). */
  compact?: boolean;
  /**
   * The terminal's width (tableWidth(ctx)): when the table is wider, its widest columns are
   * wrapped until it fits. Absent (a pipe, a file): the table keeps its natural width.
   */
  width?: number | undefined;
}

/** The width a table on stdout must fit: the terminal's, or none when stdout is not a terminal. */
export function tableWidth(ctx: { stdout: { isTTY?: boolean; columns?: number } }): number | undefined {
  return ctx.stdout.isTTY && ctx.stdout.columns ? ctx.stdout.columns : undefined;
}

// cli-table3 (a CommonJS package: required when a table is drawn) costs ~4 ms of start-up that the
// commands importing this module for CSV, JSON or tableWidth alone need not pay.
const require = createRequire(import.meta.url);

/** A column is never wrapped narrower than this (or its natural width, when that is less). */
export const MIN_COLUMN_WIDTH = 8;

/** Visible columns of a cell's longest line. */
function widthOf(text: string): number {
  return Math.max(0, ...text.split('\n').map(displayWidth));
}

/**
 * The widest width each column may keep so the table fits `total` columns. Columns of prose
 * (`wrappable`: cells with spaces, such as an error message) give way first, the widest of them
 * first, down to a common cap; words that break badly (URLs, ids) only when that is not enough.
 * Never below MIN_COLUMN_WIDTH. cli-table3 adds one space either side of a cell and one border
 * between and around the columns.
 */
export function fitColumns(natural: readonly number[], total: number, wrappable: readonly boolean[] = []): number[] {
  const room = total - (natural.length * 3 + 1);
  const widths = [...natural];
  const used = (): number => widths.reduce((a, b) => a + b, 0);
  for (const group of [natural.map((_, i) => wrappable[i] === true), natural.map(() => true)]) {
    if (used() <= room) break;
    // Each pass starts from the widths the last one left (prose already cut stays cut).
    const start = [...widths];
    const others = start.reduce((acc, w, i) => acc + (group[i] ? 0 : w), 0);
    const capped = (cap: number): number => others + start.reduce((acc, w, i) => acc + (group[i] ? Math.min(w, cap) : 0), 0);
    // The largest cap that fits: binary search between the floor and the widest column.
    let lo = MIN_COLUMN_WIDTH;
    let hi = Math.max(MIN_COLUMN_WIDTH, ...start);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (capped(mid) <= room) lo = mid;
      else hi = mid - 1;
    }
    start.forEach((w, i) => {
      if (group[i]) widths[i] = Math.min(w, lo);
    });
  }
  return widths;
}

/**
 * Wraps one line of text to `width` columns: at spaces where it can, inside a word where a word
 * is longer than the column (a URL, an id).
 */
export function wrapText(text: string, width: number): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let current: string[] = [];
    const flush = (): void => {
      out.push(current.join('').trimEnd());
      current = [];
    };
    // Each word keeps the spaces after it; they separate it from the next, and vanish at a line end.
    for (const word of line.split(/(?<= )(?=[^ ])/)) {
      let chars = [...word];
      const bare = [...word.trimEnd()].length;
      if (current.length > 0 && current.length + bare > width) flush();
      while (chars.length > width && [...chars.join('').trimEnd()].length > width) {
        const room = width - current.length;
        current.push(...chars.slice(0, room));
        chars = chars.slice(room);
        flush();
      }
      current.push(...chars);
    }
    flush();
  }
  return out.join('\n');
}

function text(v: CellValue): string {
  if (v === null || v === undefined) return '';
  return String(v);
}

/** A cell as a terminal may show it: cells often hold a node's words (see terminal-text.ts). */
function cellText(v: CellValue): string {
  return escapeText(text(v));
}

/**
 * Renders rows as a cli-table3 table with a trailing newline, ready for stdout.
 * Generic: any command with tabular output (status, sweep, read, write) uses it.
 * Colour comes only from `opts.colour` (ctx.colour), never from the environment directly:
 * cli-table3's own styling is switched off and the header is painted with our painter.
 * Every header and cell is escaped before it is painted, so no cell can move the cursor,
 * break its row, or forge one.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly CellValue[])[], opts: TableOptions): string {
  const p = painter(opts.colour);
  // Escaped first, then fitted to the width, then painted: the wrapping counts what is shown.
  let head = headers.map((h) => cellText(h));
  let body = rows.map((row) => headers.map((_, c) => cellText(row[c])));
  if (opts.width !== undefined) {
    const natural = head.map((h, c) => Math.max(widthOf(h), ...body.map((row) => widthOf(row[c]!))));
    const wrappable = head.map((_, c) => body.some((row) => row[c]!.includes(' ')));
    const fitted = fitColumns(natural, opts.width, wrappable);
    const fit = (cell: string, c: number): string => (fitted[c]! < natural[c]! ? wrapText(cell, fitted[c]!) : cell);
    head = head.map(fit);
    body = body.map((row) => row.map(fit));
  }
  const Table = require('cli-table3') as typeof TableT;
  const table = new Table({
    head: head.map((h) => (opts.colour ? p.bold(h) : h)),
    colAligns: headers.map((_, i) => opts.align?.[i] ?? 'left'),
    style: { head: [], border: [], compact: opts.compact ?? true },
    wordWrap: false,
  });
  body.forEach((row, r) => {
    table.push(row.map((cell, c) => (opts.colour && opts.paint ? opts.paint(cell, c, r, p) : cell)));
  });
  return `${table.toString()}\n`;
}

/**
 * CSV with a header row, in the one RFC 4180 dialect every command writes (see render/csv.ts).
 * Exact bytes for a file or a pipe; with `terminal` (stdout is a TTY: a person reads it) control
 * characters are escaped like in a table.
 */
export function renderCsv(headers: readonly string[], rows: readonly (readonly CellValue[])[], opts: { terminal?: boolean } = {}): string {
  const field = opts.terminal ? cellText : text;
  return [csvRow(headers), ...rows.map((row) => csvRow(headers.map((_, c) => field(row[c]))))].join('');
}

/** Exactly one JSON document with a trailing newline, for `--output json`. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
