import type { Writable } from 'node:stream';
import { displayWidth } from './terminal-text.js';

/** Spinner frames for live lines (the same dots ora uses). */
export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;

/** Cuts a line to `width` visible columns without breaking ANSI codes; adds `…` when cut. */
export function truncateLine(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  let out = '';
  let seen = 0;
  for (let i = 0; i < s.length;) {
    if (s[i] === '\u001b') {
      // eslint-disable-next-line no-control-regex
      const m = /^\u001b\[[0-9;?]*[A-Za-z]/.exec(s.slice(i));
      if (m) {
        out += m[0];
        i += m[0].length;
        continue;
      }
    }
    const cp = s.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (seen >= width - 1) break;
    out += ch;
    seen++;
    i += ch.length;
  }
  // Reset any colour left open by the cut.
  return `${out}…${s.includes('\u001b[') ? '\u001b[0m' : ''}`;
}

export interface LiveLinesOptions {
  /** Produces the block to show; `frame` counts redraws (for spinners), `width` is the usable width. */
  render(frame: number, width: number): string[];
  /** Redraw period (default 100 ms). */
  intervalMs?: number;
}

/**
 * A block of lines on a terminal, redrawn in place: the block's previous lines are erased
 * (cursor up, clear to end of screen) and the new ones written. Lines are cut to the terminal
 * width so nothing wraps (a wrapped line would break the cursor arithmetic), and a block
 * taller than the terminal is cut with a `… and N more` line. Only for interactive streams:
 * callers use plain log lines when ctx.interactive is false.
 */
export class LiveLines {
  private shown = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly out: Writable & { columns?: number; rows?: number },
    private readonly opts: LiveLinesOptions,
  ) {}

  start(): this {
    this.out.write('\u001b[?25l'); // hide the cursor while redrawing
    this.redraw();
    this.timer = setInterval(() => this.redraw(), this.opts.intervalMs ?? 100);
    this.timer.unref();
    return this;
  }

  redraw(): void {
    if (this.stopped) return;
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    const height = Math.max(3, (this.out.rows ?? 24) - 2);
    let lines = this.opts.render(this.frame++, width).map((l) => truncateLine(l, width));
    if (lines.length > height) lines = [...lines.slice(0, height - 1), `… and ${lines.length - height + 1} more`];
    const up = this.shown > 0 ? `\u001b[${this.shown}A\r` : '\r';
    this.out.write(`${up}\u001b[0J${lines.map((l) => `${l}\n`).join('')}`);
    this.shown = lines.length;
  }

  /** Draws the last frame (left on screen), stops redrawing and shows the cursor again. */
  stop(): void {
    if (this.stopped) return;
    if (this.timer) clearInterval(this.timer);
    this.redraw();
    this.stopped = true;
    this.out.write('\u001b[?25h');
  }
}
