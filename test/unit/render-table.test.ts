import { describe, expect, it } from 'vitest';
import { fitColumns, MIN_COLUMN_WIDTH, renderCsv, renderJson, renderTable, wrapText } from '../../src/cli/render/table.js';

describe('renderTable', () => {
  it('renders headers and rows without ANSI codes when colour is off', () => {
    const out = renderTable(
      ['node', 'n'],
      [
        ['http://a:1', 5],
        ['http://bb:2', null],
      ],
      { colour: false, align: [undefined, 'right'] },
    );
    expect(out).not.toMatch(/\u001b\[/);
    expect(out.endsWith('\n')).toBe(true);
    const lines = out.trimEnd().split('\n');
    expect(lines.some((l) => /node\s+│\s+n/.test(l))).toBe(true);
    // right alignment: the 5 sits against the right border
    expect(lines.find((l) => l.includes('http://a:1'))).toMatch(/ 5 │$/);
  });

  it('paints the header and cells only when colour is on', () => {
    const paint = (cell: string, _c: number, _r: number, p: { red(s: string): string }): string => (cell === 'failed' ? p.red(cell) : cell);
    const on = renderTable(['state'], [['failed']], { colour: true, paint });
    const off = renderTable(['state'], [['failed']], { colour: false, paint });
    expect(on).toMatch(/\u001b\[31mfailed/);
    expect(off).not.toMatch(/\u001b\[/);
  });
});

describe('renderCsv', () => {
  it('quotes only fields that need it', () => {
    expect(
      renderCsv(
        ['a', 'b'],
        [
          ['x,y', 'say "hi"'],
          [1, undefined],
        ],
      ),
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n1,\r\n');
  });
});

describe('renderJson', () => {
  it('prints one document with a newline', () => {
    expect(JSON.parse(renderJson({ a: 1 }))).toEqual({ a: 1 });
  });
});

describe('renderTable fits the terminal width', () => {
  const rows = [
    ['http://127.0.0.1:46093', 'unreachable', 'connection refused (ECONNREFUSED) while connecting to the node at port 46093'],
    ['http://127.0.0.1:1', 'ok', ''],
  ];
  const widest = (out: string): number =>
    Math.max(
      ...out
        .trimEnd()
        .split('\n')
        .map((l) => [...l].length),
    );

  it('wraps the widest column until the table fits, keeping every word', () => {
    const natural = renderTable(['node', 'state', 'note'], rows, { colour: false });
    expect(widest(natural)).toBeGreaterThan(60);
    const fitted = renderTable(['node', 'state', 'note'], rows, { colour: false, width: 60 });
    expect(widest(fitted)).toBeLessThanOrEqual(60);
    // nothing lost: the note's words are all there, one row spread over several lines
    for (const word of ['connection', 'refused', '(ECONNREFUSED)', 'while', 'port', '46093']) expect(fitted).toContain(word);
    expect(fitted.split('\n').filter((l) => l.includes('http://127.0.0.1:46093'))).toHaveLength(1);
    // the narrow columns keep their natural width
    expect(fitted).toContain('│ unreachable │');
  });

  it('leaves a table that fits, or one without a width, as it is', () => {
    expect(renderTable(['a'], [['x']], { colour: false, width: 80 })).toBe(renderTable(['a'], [['x']], { colour: false }));
  });

  it('cuts the widest columns first, to a common width, never below the minimum', () => {
    expect(fitColumns([10, 40, 5], 80)).toEqual([10, 40, 5]);
    const fit = fitColumns([10, 40, 30], 60);
    expect(fit.reduce((a, b) => a + b, 0) + 3 * 3 + 1).toBeLessThanOrEqual(60);
    expect(fit[0]).toBe(10);
    expect(fit[1]).toBe(fit[2]);
    expect(fitColumns([40, 40], 10)).toEqual([MIN_COLUMN_WIDTH, MIN_COLUMN_WIDTH]);
  });

  it('wraps prose before words that break badly (URLs, ids)', () => {
    // node URL 22 wide, a message 77 wide: only the message gives way
    expect(fitColumns([22, 11, 77], 60, [false, false, true])).toEqual([22, 11, 17]);
    // not enough with the prose at its floor: the others give way too, the prose stays cut
    expect(fitColumns([40, 11, 77], 40, [false, false, true])).toEqual([11, 11, 8]);
  });

  it('wraps at spaces, and inside a word only when the word is longer than the column', () => {
    expect(wrapText('connection refused (ECONNREFUSED)', 12)).toBe('connection\nrefused\n(ECONNREFUSE\nD)');
    expect(wrapText('http://127.0.0.1:46093', 10)).toBe('http://127\n.0.0.1:460\n93');
    expect(wrapText('a b c', 10)).toBe('a b c');
  });

  it("never lets a wrapped cell carry a node's control characters: escaping comes first", () => {
    const out = renderTable(['note'], [['evil \u001b[2J text that is long enough to be wrapped here']], { colour: false, width: 30 });
    expect(out).not.toContain('\u001b');
    expect(out).toContain('\\x1b[2J');
  });
});
