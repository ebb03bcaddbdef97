import type { Engine, RollupMember, RollupType } from './types.js';

/** What one rollup read asks for. Times and span in milliseconds. */
export interface RollupQuery {
  uuid: string;
  metric: string;
  startMs: number;
  endMs: number;
  spanMs: number;
  engine?: Engine;
  type?: RollupType;
}

/** One bucket of `type=all`: every member, null when the bucket is empty. */
export type RollupAll = Record<RollupMember, number | null>;
export type RollupValue = number | null;

/** A response row: `[epoch seconds (fractional for sub-second spans), value]`. */
export type RollupRow = [number, RollupValue];
export type RollupAllRow = [number, RollupAll | null];

/** Default cap on buckets in one response (spec part B). */
export const DEFAULT_MAX_BUCKETS = 1_000_000;
