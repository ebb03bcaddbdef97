import { Chalk } from 'chalk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { painter, type Painter } from '../../src/cli/render/painter.js';

// painter() replaced chalk (10 ms of start-up) and must write what chalk 5 writes at level 1 (on)
// and level 0 (off): the same bytes for every style, text with newlines (\n and \r\n), text that
// holds colours already, nested styles, and several or non-string arguments.
const STYLES = ['bold', 'dim', 'red', 'green', 'yellow', 'cyan'] as const satisfies readonly (keyof Painter)[];

// Text made of pieces that matter to the styling: line breaks, escape codes (ours and others), plain words.
const piece = fc.constantFrom('a', 'word ', ' ', '\n', '\r\n', '\r', '\u001B[22m', '\u001B[39m', '\u001B[31m', '\u001B[1m', '\u001B[0m', 'é', '');
const text = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
  fc.string(),
);

describe('painter writes what chalk writes', () => {
  for (const level of [0, 1] as const) {
    const chalk = new Chalk({ level });
    const ours = painter(level === 1);

    it(`every style, any text (chalk level ${level})`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...STYLES), text, (style, s) => ours[style](s) === chalk[style](s)),
        { numRuns: 3000 },
      );
    });

    it(`nested styles, several and non-string arguments (chalk level ${level})`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...STYLES), fc.constantFrom(...STYLES), text, text, (outer, inner, a, b) => {
          expect(ours[outer](`${a}${ours[inner](b)}${a}`)).toBe(chalk[outer](`${a}${chalk[inner](b)}${a}`));
          expect(ours[outer](a, b, 3)).toBe(chalk[outer](a, b, 3));
        }),
        { numRuns: 2000 },
      );
      expect(ours.red(42)).toBe(chalk.red(42));
      expect(ours.green()).toBe(chalk.green());
      expect(ours.bold(null)).toBe(chalk.bold(null));
    });

    it(`yellow(bold(s)) is chalk's yellow.bold(s) (read's highlight; chalk level ${level})`, () => {
      fc.assert(
        fc.property(text, (s) => ours.yellow(ours.bold(s)) === chalk.yellow.bold(s)),
        { numRuns: 3000 },
      );
    });
  }

  it('on: the ANSI codes themselves', () => {
    const p = painter(true);
    expect(p.red('x')).toBe('\u001B[31mx\u001B[39m');
    expect(p.bold('a\nb')).toBe('\u001B[1ma\u001B[22m\n\u001B[1mb\u001B[22m');
    expect(p.dim('')).toBe('');
  });
});
