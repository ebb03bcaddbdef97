/**
 * Tag queries: the store's query language, parsed and matched. Pure and shared: the reference node
 * matches its metrics with it, the client refuses a query that does not parse before sending it.
 * Depends on nothing else in src/.
 */
export * from './activity.js';
export * from './match.js';
export * from './metric-name.js';
export * from './query.js';
export { compileRegex } from './regex.js';
