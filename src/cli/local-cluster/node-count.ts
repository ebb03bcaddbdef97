/** How many nodes `cluster up` and `demo` start, and how many copies of each metric: their flags and checks. */
import type { CliContext } from '../context.js';
import { InvalidValueError, UsageError } from '../errors.js';
import { flag } from '../flags.js';

/**
 * The old `cluster up --nodes <n>` (and `demo --nodes <n>`): still read for one release, with a
 * warning, because `--nodes` is a node list everywhere else. A list given here is refused with a
 * pointer to --count, not read as a count.
 */
export function deprecatedNodeCount(max: number) {
  return flag.parsed(
    '--nodes <n>',
    'deprecated spelling of --count',
    (text, field) => {
      const t = text.trim();
      if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > max) {
        throw new InvalidValueError(
          field,
          text,
          `${JSON.stringify(text)} is not a node count (this command starts nodes; --nodes <n> is the old spelling of --count <n>)`,
          `use --count <n>, from 1 to ${max}`,
        );
      }
      return Number(t);
    },
    { hidden: true, complete: { kind: 'none' } },
  );
}

/** `--write-copies`: 1 to the node count; by default 2 (1 for a single node). */
export function writeCopiesFor(requested: number | undefined, count: number): number {
  if (requested === undefined) return Math.min(2, count);
  if (requested > count) {
    throw new UsageError(
      `--write-copies: ${requested} copies need at least ${requested} nodes, and --count is ${count}`,
      'each copy of a metric lives on a different node: raise --count or lower --write-copies',
    );
  }
  return requested;
}

/**
 * The node count from `--count`, or from the old `--nodes <n>` (with a warning; both at once is
 * an error), else the default.
 */
export function nodeCount(flags: { count?: number | undefined; nodes?: number | undefined }, ctx: Pick<CliContext, 'log'>, command: string, fallback: number): number {
  if (flags.count !== undefined && flags.nodes !== undefined) {
    throw new UsageError(`--count and --nodes both given to ${command}`, '--nodes <n> is the old spelling of --count <n>: give --count only');
  }
  if (flags.nodes !== undefined) {
    ctx.log.warn(
      `${command} --nodes ${flags.nodes} is deprecated: use --count ${flags.nodes} (--nodes names a node list in every other command; this spelling goes in the next release)`,
    );
    return flags.nodes;
  }
  return flags.count ?? fallback;
}
