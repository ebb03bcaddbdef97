import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeLogger } from '../../src/cli/context.js';
import { currentWork } from '../../src/cli/render/node-progress.js';
import { renderRollupTable } from '../../src/cli/render/rollup-table.js';
import { renderCsv, renderTable } from '../../src/cli/render/table.js';
import { escapeLine, escapeText } from '../../src/cli/render/terminal-text.js';
import { painter } from '../../src/cli/render/painter.js';
import type { SweepStatus } from '../../src/protocol/index.js';

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('escapeText', () => {
  it('shows every control character as a visible escape', () => {
    expect(escapeText('a\u001b]0;title\u0007b')).toBe('a\\x1b]0;title\\x07b');
    expect(escapeText('x\u001b[2Jy\rz\nw\tv')).toBe('x\\x1b[2Jy\\rz\\nw\\tv');
    expect(escapeText('c1 \u009b31m del \u007f')).toBe('c1 \\x9b31m del \\x7f');
    expect(escapeText('bidi \u202eevil\u2066 sep\u2028')).toBe('bidi \\u202eevil\\u2066 sep\\u2028');
  });

  it('leaves ordinary text (Unicode included) alone, and escaping twice changes nothing', () => {
    for (const s of ['cpu.user', 'métrique ✔ 温度', 'C:\\path\\x1b', '']) expect(escapeText(s)).toBe(s);
    const once = escapeText('\u001b[31mred\r');
    expect(escapeText(once)).toBe(once);
  });
});

describe('escapeLine', () => {
  it('keeps colour around the whole line when asked, escapes colour inside, and resets at the end', () => {
    const p = painter(true);
    const line = p.red(`error: node said \u001b[8mhidden\u001b[32m`);
    const out = escapeLine(line, true);
    expect(out.startsWith('\u001b[31merror: node said \\x1b[8mhidden')).toBe(true);
    expect(out.endsWith('\u001b[39m\u001b[0m')).toBe(true);
    expect(escapeLine(line, false)).not.toContain('\u001b');
  });
});

describe('the logger escapes every line it writes', () => {
  const capture = (colour: boolean) => {
    let text = '';
    const stderr = new Writable({
      write: (c: Buffer, _e, cb) => {
        text += c.toString();
        cb();
      },
    });
    const p = painter(colour);
    const log = makeLogger({ stderr, interactive: true, verbose: true, now: () => 0, colour, paint: { warn: (s) => p.yellow(s), error: (s) => p.red(s), dim: (s) => p.dim(s) } });
    return { log, text: () => text };
  };

  it('a node message cannot clear the screen, start a line of its own, or show a password', () => {
    const { log, text } = capture(false);
    log.error('http://a:1: HTTP 500: \u001b[2J\r\n2026-01-01T00:00:00Z all nodes done');
    log.warn('proxy https://user:hunter2@proxy:3128 refused');
    log.info(`node says \u001b]0;x\u0007`);
    expect(text()).not.toMatch(RAW_CONTROL);
    expect(text().split('\n')).toHaveLength(4);
    expect(text()).toContain('\\x1b[2J\\r\\n2026-01-01T00:00:00Z all nodes done');
    expect(text()).not.toContain('hunter2');
    expect(text()).toContain('https://[redacted]@proxy:3128');
  });

  it("with colour on, the caller's own colour survives", () => {
    const { log, text } = capture(true);
    log.info(painter(true).green('cluster up'));
    log.warn('node text \u001b[8m');
    expect(text()).toContain('\u001b[32mcluster up\u001b[39m');
    expect(text()).toContain('node text \\x1b[8m');
  });
});

describe('the table renderers escape their cells', () => {
  it('a forged row stays inside its cell', () => {
    const forged = 'x\r│ http://db9:8112 │ done │\n│ http://db8 │ done │';
    const out = renderTable(['node', 'state', 'detail'], [['http://a:1', 'failed', forged]], { colour: true, paint: (c, _i, _r, p) => p.red(c) });
    const plain = out.replace(/\u001b\[\d+m/g, '');
    expect(plain).not.toMatch(RAW_CONTROL);
    expect(plain.trimEnd().split('\n')).toHaveLength(5); // top, header, rule, the one row, bottom
    expect(plain).toContain('x\\r│ http://db9:8112 │ done │\\n│ http://db8 │ done │');
  });

  it('rollup tables escape their headers; CSV escapes only for a terminal', () => {
    const lines = renderRollupTable([{ header: 'a\u001b[2Jb', align: 'left', cells: ['1'] }]);
    expect(lines.join('\n')).toContain('a\\x1b[2Jb');
    expect(renderCsv(['m'], [['a\u001bb']])).toBe('m\r\na\u001bb\r\n');
    expect(renderCsv(['m'], [['a\u001bb']], { terminal: true })).toBe('m\r\na\\x1bb\r\n');
  });

  it("the progress renderer's current-work text is escaped", () => {
    const status = { nnt: { running: false }, text: { running: true, current_metric: 'u-\u001b[1Am' }, histogram: { running: false } } as unknown as SweepStatus;
    expect(currentWork(status)).toBe('text u-\\x1b[1Am');
  });
});
