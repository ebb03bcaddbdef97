/**
 * The wire contract's shared lists, in one place with no imports: the protocol, the client, the
 * server and the command declarations all use these (a declaration may load this file and nothing
 * else of protocol/ at startup: test/cli/startup.test.ts). Add a list here rather than copy it.
 */

/** Header prefixes: ours, and the production store's, which nodes accept too. */
export const HEADER_PREFIXES = ['X-Service', 'X-Snowth'] as const;
export type HeaderPrefix = (typeof HEADER_PREFIXES)[number];
export const DEFAULT_HEADER_PREFIX: HeaderPrefix = 'X-Service';

/** Data types a sweep can delete and a write or read takes. `text` has no rollups. */
export const DATA_TYPES = ['nnt', 'text', 'histogram'] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** Where a rollup read takes its data from. */
export const ENGINES = ['dispatch', 'nnt', 'recalc'] as const;
export type Engine = (typeof ENGINES)[number];
export const DEFAULT_ENGINE: Engine = 'dispatch';

/** Canonical rollup read `type` values (what the client sends). */
export const ROLLUP_TYPES = [
  'count',
  'average',
  'derive',
  'counter',
  'average_stddev',
  'derive_stddev',
  'counter_stddev',
  'derive2',
  'counter2',
  'derive2_stddev',
  'counter2_stddev',
  'all',
] as const;
export type RollupType = (typeof ROLLUP_TYPES)[number];
export const DEFAULT_ROLLUP_TYPE: RollupType = 'average';

/** Accepted aliases (spec part B) and the canonical name they stand for. */
export const ROLLUP_TYPE_ALIASES: Readonly<Record<string, RollupType>> = {
  derivative: 'derive',
  derivative_stddev: 'derive_stddev',
  derivative2: 'derive2',
  derivative2_stddev: 'derive2_stddev',
};
