import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { queryOf, startRecordingNode, type RecordingNode } from '../helpers/recording-node.js';
import { closeTerminals, openTerminal, terminalEnv } from '../helpers/tmux.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_040;

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a command in an 80×30 terminal (a real pseudo-terminal) and returns the screen once it is done. */
async function onScreen(args: string[]): Promise<string[]> {
  const cmd = `${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}; echo __DONE__$?; sleep 60`;
  const term = openTerminal(cmd, { columns: 80, rows: 30, env: terminalEnv({ NO_COLOR: '1', LANG: 'C.UTF-8' }) });
  let screen = '';
  await term.until('the command to end', () => (screen = term.screen()).includes('__DONE__'));
  term.close();
  return screen.split('\n');
}

let node: RecordingNode;
beforeAll(async () => {
  const rows = Array.from({ length: 60 }, (_, i) => [T0 + i * 60, i === 20 || i === 21 ? null : Math.round((50 + 40 * Math.sin(i / 6)) * 1000) / 1000 + 0.1 + 0.2]);
  // Answers like a node: only the buckets inside the requested range.
  node = await startRecordingNode((req) => {
    const q = queryOf(req);
    const from = Number(q.get('start_ts'));
    const to = Number(q.get('end_ts'));
    return { body: JSON.stringify(rows.filter(([t]) => t! >= from && t! < to)) };
  });
});
afterAll(async () => {
  await node?.close();
  closeTerminals();
});

describe('tsnode read in a real 80×30 terminal', () => {
  it('the table fits without wrapping', async () => {
    const screen = await onScreen(['read', U, 'cpu', '--start', String(T0), '--end', String(T0 + 600), '--span', '60s', '--node', node.url]);
    const done = screen.findIndex((l) => l.startsWith('__DONE__'));
    expect(screen[done]).toBe('__DONE__0');
    // Where the nodes came from, on a line of its own; then the read's header.
    expect(screen[0]).toMatch(/^nodes: --node http:\/\/127\.0\.0\.1:\d+, 1 node$/);
    const header = screen.slice(1, done).filter((l) => !/^[┌│├└]/.test(l));
    // The header on stderr wraps at its separators, never mid-word.
    expect(header.length).toBeGreaterThanOrEqual(2);
    expect(header.join(' ')).toMatch(/node http:\/\/127\.0\.0\.1:\d+ · check 3f2a9c1e/);
    for (const l of header.slice(1)) expect(l.startsWith('  ')).toBe(true);
    const table = screen.slice(0, done).filter((l) => /^[┌│├└]/.test(l));
    expect(table).toHaveLength(10 + 4);
    for (const l of table) {
      expect([...l.trimEnd()].length).toBeLessThanOrEqual(80);
      expect(l.trimEnd()).toMatch(/[┐│┤┘]$/); // each row complete on its own line
    }
    expect(table[3]).toMatch(/^│ 2023-11-14T22:14:00Z │ +50\.300 │$/); // 50.300000000000004 on the wire
    expect(table.some((l) => / - │$/.test(l))).toBe(false); // no nulls in the first ten
  });

  it('the chart fills the screen width and height without wrapping, with gaps for nulls', async () => {
    const screen = await onScreen(['read', U, 'cpu', '--start', String(T0), '--end', String(T0 + 3600), '--span', '60s', '--node', node.url, '--output', 'chart']);
    const done = screen.findIndex((l) => l.startsWith('__DONE__'));
    expect(screen[done]).toBe('__DONE__0');
    const lines = screen.slice(0, done);
    for (const l of lines) expect([...l.trimEnd()].length).toBeLessThanOrEqual(79);
    const axis = lines.findIndex((l) => /└─+$/.test(l.trimEnd()));
    expect(axis).toBeGreaterThan(10);
    // Everything the command printed fits on the 30-line screen with the prompt line to spare.
    expect(done).toBeLessThanOrEqual(29);
    expect([...lines[axis]!.trimEnd()].length).toBe(79);
    const plotStart = lines[axis]!.indexOf('└') + 1;
    const plot = lines
      .slice(0, axis)
      .filter((l) => /[┤│]/.test(l))
      .map((l) => [...l.slice(l.search(/[┤│]/) + 1)]);
    expect(plot.length).toBeGreaterThan(20);
    expect(plotStart).toBeGreaterThan(3);
    // Two null buckets in 60 over 76 columns: some character column is blank from top to bottom
    // between drawn columns.
    const width = Math.max(...plot.map((r) => r.length));
    const blank = (x: number) => plot.every((r) => (r[x] ?? ' ') === ' ');
    const firstDrawn = [...Array(width).keys()].find((x) => !blank(x))!;
    const lastDrawn = [...Array(width).keys()].reverse().find((x) => !blank(x))!;
    const inner = [...Array(width).keys()].filter((x) => x > firstDrawn && x < lastDrawn && blank(x));
    expect(inner.length).toBeGreaterThanOrEqual(1);
    expect(lines[axis + 1]).toMatch(/22:14 .* 23:13/);
  });
});
