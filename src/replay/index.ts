export { writeRecords } from './replay.js';
export type { WriteTarget, ReplayOptions, ReplayProgress, ReplayEvent, NodeReport, InputReport, StopReason, ReplayResult } from './types.js';
export { ReplayUsageError, AckCountError } from './errors.js';
export { rejectedIndex } from './acknowledge.js';
export { ReplayStateError, LowWater, loadState, saveState, type ReplayState, type InputState, type SettledCounts } from './state.js';
export { UnsafeFileError } from './private-file.js';
