export * from './splitter.js';
export * from './reader.js';
export * from './batch.js';
export * from './kinds.js';
