/** `tsnode find`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { accountFlag } from '../../account-flag.js';
import { networkFlags } from '../../network-options.js';

/** The most metrics one node lists by default (the store's default advisory limit). */
export const DEFAULT_FIND_LIMIT = 10_000;

export function findFlags() {
  return {
    account: accountFlag(),
    count: flag.boolean('--count', "only count: each node's count and their total (a metric kept on n nodes counts n times)"),
    limit: flag.count(
      '--limit <n>',
      `the most metrics one node lists, sent as X-Snowth-Advisory-Limit (default: ${DEFAULT_FIND_LIMIT}); a node with more says so and the exit is 3`,
      {
        min: 1,
        max: 1_000_000,
        complete: { kind: 'none' },
      },
    ),
    output: flag.output(),
    ...networkFlags(),
  };
}
export type FindOptions = FlagValues<ReturnType<typeof findFlags>>;
/** The flags and the query argument, as the action and the render read them. */
export type FindArgs = FindOptions & { query: string };
