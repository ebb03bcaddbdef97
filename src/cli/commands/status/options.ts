/** `tsnode status`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { networkFlags } from '../../network-options.js';
import { InvalidValueError } from '../../errors.js';
import { parseDuration } from '../../values.js';

/** `--watch` intervals: a poll a node can answer before the next, and a watch that still watches. */
export const MIN_WATCH_MS = 100;
export const MAX_WATCH_MS = 3_600_000;

/** A `--watch` interval within MIN_WATCH_MS..MAX_WATCH_MS (a bare `--watch` is 2s). */
export function parseWatchInterval(text: string, field = '--watch'): number {
  const ms = parseDuration(text, field);
  if (ms < MIN_WATCH_MS || ms > MAX_WATCH_MS) {
    throw new InvalidValueError(field, text, `${JSON.stringify(text)} is outside 100ms..1h (the interval between two polls of each node)`, 'e.g. --watch 5s');
  }
  return ms;
}

/** The `--watch` value as commander used to hand it over (undefined, `true` for a bare flag, or text). */
export function parseWatch(value: boolean | string | undefined): number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return 2000;
  return parseWatchInterval(value);
}

/** Node's timers hold at most 24.8 days. */
const MAX_LOST_AFTER = 24 * 86_400_000;

export function statusFlags() {
  return {
    watch: flag.parsed('--watch [interval]', 'keep polling each node every interval (100ms to 1h) until every node is idle', parseWatchInterval, { preset: '2s' }),
    lostAfter: flag.duration('--lost-after <duration>', 'with --watch: a node without a usable answer for this long is reported lost', { default: '30s', max: MAX_LOST_AFTER }),
    untilCaughtUp: flag.boolean(
      '--until-caught-up',
      'with --watch: also wait until no node of a replicating ring has data in flight towards it (replication lag 0), as sweeps require',
    ),
    perType: flag.boolean('--per-type', 'table: a row per node and data type, instead of one row per node with every type in it'),
    output: flag.output(),
    ...networkFlags(),
  };
}
export type StatusOptions = FlagValues<ReturnType<typeof statusFlags>>;
