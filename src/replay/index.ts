export * from './write-records.js';
export { ReplayStateError, LowWater, loadState, saveState, type ReplayState, type InputState } from './state.js';
