import { z } from 'zod';
import { ROLLUP_MEMBERS, type Engine, type RollupMember, type RollupType } from './types.js';

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

const value = z.number().nullable();
export const rollupRowsSchema = z.array(z.tuple([z.number(), value]));
const allObject = z.looseObject(Object.fromEntries(ROLLUP_MEMBERS.map((m) => [m, value.optional()])) as Record<RollupMember, z.ZodOptional<typeof value>>);
export const rollupAllRowsSchema = z.array(z.tuple([z.number(), allObject.nullable()]));

/** Default cap on buckets in one response (spec part B). */
export const DEFAULT_MAX_BUCKETS = 1_000_000;
