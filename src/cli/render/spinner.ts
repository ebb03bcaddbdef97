/**
 * A spinner on stderr, for a command waiting on one thing: only on an interactive terminal wide
 * enough to hold it, and never with --no-progress or -q (showsProgress). ora is loaded only when
 * a spinner is drawn.
 */
import type { Ora } from 'ora';
import { showsProgress, type CliContext } from '../context.js';

export async function startSpinner(ctx: CliContext, text: string): Promise<Ora | undefined> {
  if (!ctx.interactive || !showsProgress(ctx) || (ctx.stderr.columns ?? 80) < 20) return undefined;
  const ora = (await import('ora')).default;
  return ora({ text, stream: ctx.stderr, color: 'cyan', discardStdin: false }).start();
}
