/**
 * `tsnode demo`'s own output: the commands it shows, the per-node summary table and the last
 * line. Everything else it prints is the output of the commands it runs, through their render.ts.
 */
import { renderTable } from '../../render/table.js';
import type { NodeVerdict } from './verify.js';

/** Quotes a word for display only when the shell would need it. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** One row per node: what is left before the cut-off, what is kept after it, and the verdict. */
export function renderSummary(verdicts: readonly NodeVerdict[], colour: boolean): string {
  const pair = (old: number, recent: number, expected: number): string => `${old} / ${recent} of ${expected}`;
  return renderTable(
    ['node', 'numeric hours: old / kept', 'text: old / kept', 'histograms: old / kept', 'result'],
    verdicts.map((v) => [
      v.node,
      pair(v.nntOld, v.nntRecent, v.nntRecentExpected),
      pair(v.textOld, v.textRecent, v.textRecentExpected),
      pair(v.histOld, v.histRecent, v.histRecentExpected),
      v.ok ? 'ok' : 'FAILED',
    ]),
    { colour, align: [undefined, 'right', 'right', 'right'], paint: (cell, col, _row, p) => (col === 4 ? (cell === 'ok' ? p.green(cell) : p.red(cell)) : cell) },
  );
}

/** The demo's last line on stdout, once every node's verdict is ok. */
export function demoOkLine(nodes: number, seconds: string): string {
  return `demo ok: ${nodes}/${nodes} nodes swept (old data removed, recent data kept) in ${seconds} s\n`;
}
