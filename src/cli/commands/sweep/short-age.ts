/**
 * `sweep --before` less than an hour ago deletes nearly all data: retention's rule for ages under
 * 1h (SHORT_AGE_SECONDS), applied to a sweep. Off a terminal it is refused at preflight without
 * --allow-short-age (exit 2, nothing sent, journaled as every refusal is); on one, the `--before`
 * value is typed back after the usual yes.
 */
import type { PreflightCheck } from '../../../client/sweep-preflight.js';
import { SHORT_AGE_SECONDS } from '../../../retention/plan.js';
import type { CliContext } from '../../context.js';
import { askTyped } from '../../prompt.js';
import { describeTime } from '../../time.js';
import { canAsk } from '../../run/run-text.js';

export interface ShortAgeInput {
  /** The --before text as given. */
  before: string;
  beforeMs: number;
  allowShortAge: boolean;
}

/** Whether the cut-off is under an hour before now (and --allow-short-age was not given). */
export function isShort(s: ShortAgeInput, now: number): boolean {
  return !s.allowShortAge && now - s.beforeMs < SHORT_AGE_SECONDS * 1000;
}

function warning(s: ShortAgeInput): string {
  return `--before ${s.before} is ${describeTime(s.beforeMs)}, less than 1h ago: the sweep deletes nearly all data of the types it covers (an age under 1h is almost always a mistake, e.g. 1m for 1y)`;
}

/** The preflight check that refuses a short age off a terminal (none on one: confirmShortAge asks there). */
export function shortAgeChecks(s: ShortAgeInput, ctx: CliContext): PreflightCheck[] {
  if (!isShort(s, ctx.now()) || canAsk(ctx)) return [];
  return [() => [{ message: `${warning(s)}; refused without --allow-short-age off a terminal: add it if you mean it` }]];
}

/** On a terminal, a short age needs the --before value typed back; true when it was (or nothing is short). */
export async function confirmShortAge(s: ShortAgeInput, ctx: CliContext): Promise<boolean | 'interrupted'> {
  if (!isShort(s, ctx.now())) return true;
  const answer = await askTyped(ctx, `${warning(s)}. Type ${s.before} to sweep anyway (anything else stops here):`, s.before);
  return answer === 'interrupted' ? 'interrupted' : answer === 'yes';
}
