/**
 * Every schema a client checks a node's answer against: the protocol's and the client's own.
 * Loaded on first need (answerSchemas() in answers.ts), never at start-up: zod is ~95 modules.
 */
import { z } from 'zod';

export * from '../protocol/schemas.js';

export const textRows = z.array(z.tuple([z.number(), z.string()]));
/** Histogram rows as api/read-histogram.md gives them: `[seconds, period, {bin: count}]`. */
export const histogramRows = z.array(z.tuple([z.number(), z.number(), z.record(z.string(), z.number().int().nonnegative())]));

/** The only answer that means a DELETE started a sweep. */
export const startedAck = z.array(z.unknown()).length(0, { message: 'expected [] (the sweep started)' });
