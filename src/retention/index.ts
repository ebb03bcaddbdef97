/** Retention policies, pure core: parse a policy, plan it, and keep a resumable run's state. */
export * from './errors.js';
export * from './age.js';
export * from './policy.js';
export * from './policy-file.js';
export * from './plan.js';
export * from './plan-json.js';
export * from './run-state.js';
export * from './apply.js';
export * from './verify.js';
export * from './verify-json.js';
