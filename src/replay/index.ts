export * from './write-records.js';
export { ReplayStateError, LowWater, loadState, saveState, type ReplayState, type InputState, type SettledCounts } from './state.js';
export { UnsafeFileError } from './private-file.js';
