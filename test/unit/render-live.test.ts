import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LiveLines, truncateLine } from '../../src/cli/render/live.js';
import { displayWidth } from '../../src/cli/render/terminal-text.js';

class Screen extends Writable {
  out = '';
  columns = 30;
  rows = 6;
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.out += chunk.toString();
    cb();
  }
}

describe('truncateLine', () => {
  it('cuts to the visible width, keeping colour codes whole and closing them', () => {
    expect(truncateLine('abcdef', 10)).toBe('abcdef');
    expect(truncateLine('abcdef', 4)).toBe('abc…');
    const red = '\u001b[31mabcdef\u001b[39m';
    expect(displayWidth(red)).toBe(6);
    const cut = truncateLine(red, 4);
    expect(cut).toBe('\u001b[31mabc…\u001b[0m');
    expect(displayWidth(cut)).toBe(4);
  });
});

describe('LiveLines', () => {
  it('redraws its block in place: up as many lines as it drew, clear, redraw; never wider or taller than the terminal', () => {
    const screen = new Screen();
    let lines = ['one', 'two'];
    const live = new LiveLines(screen, { render: () => lines, intervalMs: 60_000 });
    live.start();
    expect(screen.out).toBe('\u001b[?25l\r\u001b[0Jone\ntwo\n');
    screen.out = '';
    lines = ['a'.repeat(50), 'b', 'c', 'd', 'e', 'f', 'g'];
    live.redraw();
    // back up the 2 lines drawn before, then at most rows-2 = 4 lines, each cut to columns-1 = 29
    expect(screen.out.startsWith('\u001b[2A\r\u001b[0J')).toBe(true);
    const drawn = screen.out.slice('\u001b[2A\r\u001b[0J'.length).split('\n').slice(0, -1);
    expect(drawn).toEqual([`${'a'.repeat(28)}…`, 'b', 'c', '… and 4 more']);
    screen.out = '';
    live.stop();
    expect(screen.out.startsWith('\u001b[4A\r\u001b[0J')).toBe(true);
    expect(screen.out.endsWith('\u001b[?25h')).toBe(true);
    screen.out = '';
    live.redraw();
    expect(screen.out).toBe('');
  });
});
