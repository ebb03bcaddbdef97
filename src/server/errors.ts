/**
 * Error classes of the reference node whose throwers would load the node with them (the server,
 * SQLite's addon, the identity and ring code): the library's `errors` namespace names every error
 * class, and a script that only talks to nodes must not load the node to get them. The rest sit
 * beside their throwers in modules as light as this one (store-open-error.ts, ingest-log.ts).
 */
import { TsnodeError } from '../tsnode-error.js';

/** A bad configuration value; the CLI turns it into a usage error (exit 2). */
export class ConfigError extends TsnodeError {
  declare readonly code: 'invalid_config';
  readonly field: string;
  readonly value: string;
  readonly expected: string;
  constructor(field: string, value: string, expected: string, reason?: string) {
    super('invalid_config', `${field}: ${JSON.stringify(value)} ${reason ?? 'is not valid'}`, { hint: `expected ${expected}` });
    this.name = 'ConfigError';
    this.field = field;
    this.value = value;
    this.expected = expected;
  }
}

/** Why the node cannot take on an identity or a topology: a startup error with a stable code. */
export class IdentityError extends TsnodeError {
  declare readonly code: 'bad_identity_file' | 'identity_mismatch' | 'not_in_topology';
  constructor(code: IdentityError['code'], message: string) {
    super(code, message);
    this.name = 'IdentityError';
  }
}

export type StartErrorCode = 'bad_config' | 'bad_journal' | 'port_in_use' | 'port_denied' | 'bad_host' | IdentityError['code'];

/** Thrown when the node cannot start (port in use, bad data dir). */
export class StartError extends TsnodeError {
  declare readonly code: StartErrorCode;
  constructor(code: StartErrorCode, message: string) {
    super(code, message);
    this.name = 'StartError';
  }
}

/** Why a data directory cannot be locked (in use, or a lock file that is not ours). */
export class DataDirLockError extends TsnodeError {
  declare readonly code: 'data_dir_locked';
  constructor(message: string) {
    super('data_dir_locked', message);
    this.name = 'DataDirLockError';
  }
}
