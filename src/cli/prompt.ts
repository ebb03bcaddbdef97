import { createInterface } from 'node:readline';
import type { CliContext } from './context.js';

/** `no-tty`: nobody to ask (the caller refuses without --yes); `interrupted`: Ctrl-C at the prompt. */
export type Answer = 'yes' | 'no' | 'no-tty' | 'interrupted';

/**
 * Asks a yes/no question on the terminal (question on stderr, answer from stdin). Only `y`
 * or `yes` is a yes; an empty answer is the default, no.
 */
export function askYesNo(ctx: CliContext, question: string): Promise<Answer> {
  return ask(ctx, `${question} [y/N] `, (answer) => /^(y|yes)$/i.test(answer.trim()));
}

/**
 * Asks for a confirmation stronger than a yes: only `expected`, typed exactly (spaces around it
 * aside), counts as yes; anything else, an empty line included, is no.
 */
export function askTyped(ctx: CliContext, question: string, expected: string): Promise<Answer> {
  return ask(ctx, `${question} `, (answer) => answer.trim() === expected);
}

async function ask(ctx: CliContext, prompt: string, isYes: (answer: string) => boolean): Promise<Answer> {
  if (!ctx.stdin.isTTY || !ctx.stderr.isTTY) return 'no-tty';
  if (ctx.signal.aborted) return 'interrupted';
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr, terminal: true });
  try {
    return await new Promise<Answer>((resolve) => {
      const onAbort = (): void => resolve('interrupted');
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      // In terminal mode readline swallows Ctrl-C as its own SIGINT event.
      rl.on('SIGINT', () => resolve('interrupted'));
      rl.on('close', () => resolve('no'));
      rl.question(prompt, (answer) => {
        ctx.signal.removeEventListener('abort', onAbort);
        resolve(isYes(answer) ? 'yes' : 'no');
      });
    });
  } finally {
    rl.close();
    ctx.stdin.pause();
  }
}
