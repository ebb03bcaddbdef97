export * from './types.js';
export * from './codecs.js';
export * from './errors.js';
export * from './headers.js';
export * from './status.js';
export * from './rollup.js';
export * from './records.js';
export * from './record-scan.js';
