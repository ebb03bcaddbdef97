import { DATA_TYPES, ROLLUP_TYPE_ALIASES, ROLLUP_TYPES, type DataType, type RollupType } from './constants.js';

export { DATA_TYPES, DEFAULT_ENGINE, DEFAULT_ROLLUP_TYPE, ENGINES, ROLLUP_TYPE_ALIASES, ROLLUP_TYPES, type DataType, type Engine, type RollupType } from './constants.js';

export function isDataType(value: string): value is DataType {
  return (DATA_TYPES as readonly string[]).includes(value);
}

/** Resolves a type name or alias to its canonical name; undefined when unknown. */
export function canonicalRollupType(name: string): RollupType | undefined {
  if ((ROLLUP_TYPES as readonly string[]).includes(name)) return name as RollupType;
  return ROLLUP_TYPE_ALIASES[name];
}

/** Members of one bucket for `type=all`, in the order the spec lists them. */
export const ROLLUP_MEMBERS = [
  'count',
  'value',
  'stddev',
  'derivative',
  'derivative_stddev',
  'counter',
  'counter_stddev',
  'derivative2',
  'derivative2_stddev',
  'counter2',
  'counter2_stddev',
] as const;
export type RollupMember = (typeof ROLLUP_MEMBERS)[number];

/** Which `type=all` member a single-valued type returns. */
export const MEMBER_OF_TYPE: Readonly<Record<Exclude<RollupType, 'all'>, RollupMember>> = {
  count: 'count',
  average: 'value',
  average_stddev: 'stddev',
  derive: 'derivative',
  derive_stddev: 'derivative_stddev',
  counter: 'counter',
  counter_stddev: 'counter_stddev',
  derive2: 'derivative2',
  derive2_stddev: 'derivative2_stddev',
  counter2: 'counter2',
  counter2_stddev: 'counter2_stddev',
};

/** The production store's default port. */
export const DEFAULT_PORT = 8112;

/** Default numeric and histogram rollup periods of the reference node, in seconds. */
export const DEFAULT_ROLLUPS: readonly number[] = [60, 300, 1800, 10800, 86400];
