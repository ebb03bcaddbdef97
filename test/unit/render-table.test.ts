import { describe, expect, it } from 'vitest';
import { renderCsv, renderJson, renderTable } from '../../src/cli/render/table.js';

describe('renderTable', () => {
  it('renders headers and rows without ANSI codes when colour is off', () => {
    const out = renderTable(['node', 'n'], [['http://a:1', 5], ['http://bb:2', null]], { colour: false, align: [undefined, 'right'] });
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
    expect(renderCsv(['a', 'b'], [['x,y', 'say "hi"'], [1, undefined]])).toBe('a,b\r\n"x,y","say ""hi"""\r\n1,\r\n');
  });
});

describe('renderJson', () => {
  it('prints one document with a newline', () => {
    expect(JSON.parse(renderJson({ a: 1 }))).toEqual({ a: 1 });
  });
});
