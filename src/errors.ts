/**
 * Every error class tsnode's library throws, in one module: `import { errors } from 'tsnode'`,
 * then `err instanceof errors.TsnodeError` for any of them and `err.code` for which. (The public
 * API exports this module as one namespace; nothing inside src/ imports it: each layer imports its
 * own errors, test/unit/layers.test.ts keeps it so.)
 */
export { TsnodeError } from './tsnode-error.js';
// protocol/
export { CodecError } from './protocol/codecs.js';
export { ProtocolError, type ProtocolErrorCode } from './protocol/errors.js';
// ring/, tags/
export { TopologyError } from './ring/topology.js';
export { TagQueryError } from './tags/query.js';
// records/
export { SourceError } from './records/reader.js';
export { RecordSyntaxError } from './records/splitter.js';
// client/
export { AbortedError, NodeHttpError, NodeRequestError, type NodeErrorCode } from './client/errors.js';
export { HeaderError } from './client/headers.js';
export { DiscoveryError, type DiscoveryErrorCode } from './client/discovery.js';
export { SweepNotConfirmedError } from './client/sweep.js';
export { SweepRefusedError } from './client/sweep-preflight.js';
// replay/
export { AckCountError, ReplayUsageError } from './replay/errors.js';
export { ReplayStateError } from './replay/state.js';
export { UnsafeFileError } from './replay/private-file.js';
// retention/
export { PolicyError, RetentionError, UnknownSpanError, UnsafeWildcardError, type RetentionErrorCode } from './retention/errors.js';
// run/
export { RunError, RunInterruptedError } from './run/errors.js';
export { RunLockedError } from './run/lock.js';
export { DeleteSelectsOthersError } from './run/delete.js';
// server/
// (from modules that load nothing of the node: a script that only talks to nodes never loads SQLite)
export { ConfigError, DataDirLockError, IdentityError, StartError, type StartErrorCode } from './server/errors.js';
export { StoreOpenError } from './server/storage/store-open-error.js';
export { LogDamageError } from './server/storage/ingest-log.js';
