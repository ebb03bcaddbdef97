export * from './splitter.js';
export * from './json-array-splitter.js';
export * from './ndjson-splitter.js';
export * from './reader.js';
export * from './batch.js';
export * from './kinds.js';
