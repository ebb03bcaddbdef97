/**
 * Colours for stdout and stderr, each following its own stream's colour decision. The styles
 * tsnode uses, written exactly as chalk 5 writes them at level 1 (basic ANSI colours; the unit
 * test holds the two to the same text), without chalk itself: importing chalk costs ~10 ms of CPU
 * (its colour detection reads the terminal and environment), which every command paid for a
 * painter that is off whenever output goes to a pipe or a file (bench/startup.bench.mjs).
 */

/** One style: its arguments joined by spaces (as console.log does), wrapped in the style when colour is on. */
export type Paint = (...text: unknown[]) => string;

export interface Painter {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

/** SGR open and close codes (ansi-styles' numbers). */
const STYLES: Readonly<Record<keyof Painter, readonly [open: number, close: number]>> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

const joined = (text: unknown[]): string => (text.length === 1 ? String(text[0]) : text.join(' '));

/** Every `find` in `s` followed by `then`: a style closed inside re-opens the outer one. */
function afterEach(s: string, find: string, then: string): string {
  return s.includes(find) ? s.split(find).join(find + then) : s;
}

/** `open` and `close` around each line, so a line cut by a pager or a log still ends its colour. */
function encase(s: string, open: string, close: string): string {
  let out = open;
  let from = 0;
  for (let lf = s.indexOf('\n'); lf !== -1; lf = s.indexOf('\n', from)) {
    const cr = s[lf - 1] === '\r';
    out += `${s.slice(from, cr ? lf - 1 : lf)}${close}${cr ? '\r\n' : '\n'}${open}`;
    from = lf + 1;
  }
  return `${out}${s.slice(from)}${close}`;
}

function style(open: string, close: string): Paint {
  return (...text) => {
    const s = joined(text);
    if (s === '') return s;
    return encase(s.includes('\u001B') ? afterEach(s, close, open) : s, open, close);
  };
}

const plain: Paint = (...text) => joined(text);

/** The painter of one stream: `enabled` false (NO_COLOR, a pipe, a file) paints nothing. */
export function painter(enabled: boolean): Painter {
  const out = {} as Record<keyof Painter, Paint>;
  for (const [name, [open, close]] of Object.entries(STYLES) as [keyof Painter, readonly [number, number]][]) {
    out[name] = enabled ? style(`\u001B[${open}m`, `\u001B[${close}m`) : plain;
  }
  return out;
}
