/**
 * Every error the library throws, by name: the public API exports this module as one namespace,
 * `errors` (`err instanceof errors.NodeRequestError`), so a new error class is one line here and
 * never a new top-level export. The reference node's own errors (StartError, StoreOpenError, ...)
 * come with it from 'tsnode/server', which a script that only talks to nodes never loads.
 */
export { CodecError } from './protocol/codecs.js';
export { ProtocolError } from './protocol/errors.js';
export { TopologyError } from './ring/topology.js';
export { HeaderError } from './client/headers.js';
export { AbortedError, NodeHttpError, NodeRequestError } from './client/errors.js';
export { DiscoveryError } from './client/discovery.js';
export { SweepRefusedError } from './client/sweep-preflight.js';
export { SweepNotConfirmedError } from './client/sweep.js';
export { RunError, RunInterruptedError } from './run/errors.js';
export { RunLockedError } from './run/lock.js';
export { DeleteSelectsOthersError } from './run/delete.js';
export { RecordSyntaxError } from './records/splitter.js';
export { SourceError } from './records/reader.js';
export { AckCountError, ReplayUsageError } from './replay/errors.js';
export { ReplayStateError } from './replay/state.js';
export { UnsafeFileError } from './replay/private-file.js';
export { PolicyError, RetentionError, UnknownSpanError, UnsafeWildcardError } from './retention/errors.js';
export { TagQueryError } from './tags/query.js';
export type { ProtocolErrorCode } from './protocol/errors.js';
export type { NodeErrorCode } from './client/errors.js';
export type { DiscoveryErrorCode } from './client/discovery.js';
export type { RetentionErrorCode } from './retention/errors.js';
