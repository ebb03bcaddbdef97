import { csvRow } from './csv.js';
import Table from 'cli-table3';
import { painter } from '../runtime.js';
import { escapeText } from './terminal-text.js';

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
   * Receives the painter so callers never need their own chalk instance.
   */
  paint?: (cell: string, column: number, row: number, p: ReturnType<typeof painter>) => string;
  /** Compact: no separator line between rows (the default). */
  compact?: boolean;
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
  const table = new Table({
    head: headers.map((h) => (opts.colour ? p.bold(cellText(h)) : cellText(h))),
    colAligns: headers.map((_, i) => opts.align?.[i] ?? 'left'),
    style: { head: [], border: [], compact: opts.compact ?? true },
    wordWrap: false,
  });
  rows.forEach((row, r) => {
    table.push(
      headers.map((_, c) => {
        const cell = cellText(row[c]);
        return opts.colour && opts.paint ? opts.paint(cell, c, r, p) : cell;
      }),
    );
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
