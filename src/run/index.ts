/**
 * The destructive-run core: what `sweep`, `sweep cancel`, `retention apply` (and `delete`) share
 * (target lock, preflight and its extension checks, confirmation, per-node execution, journal
 * records, refusals, outcome, catch-up). See docs/architecture.md#the-run-core.
 */
export * from './catch-up.js';
export * from './errors.js';
export * from './lock.js';
export * from './outcome.js';
export type * from './records.js';
export * from './refusal.js';
export * from './sweep.js';
export * from './journal-query.js';
export * from './cancel.js';
export * from './delete.js';
export { deleteCatchUp, deleteExitCode, judgeNodes } from './delete-outcome.js';
