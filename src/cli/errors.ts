import type { ExitCode } from './exit-codes.js';
import { EXIT } from './exit-codes.js';

/**
 * Stable, machine-readable error codes of the CLI (snake_case, as the node's own error codes).
 * A script may match on them; a new code may be added, an existing one never changes meaning.
 */
export type TsnodeErrorCode =
  /** A flag, argument or input value is not what the command takes. */
  | 'usage'
  /** A flag value has the wrong form (duration, size, count, choice). */
  | 'invalid_value'
  /** commander could not parse the command line (unknown option or command, missing argument). */
  | 'unknown_option'
  | 'unknown_command'
  | 'missing_argument'
  | 'too_many_arguments'
  | 'conflicting_options'
  /** The config file cannot be read or is not valid. */
  | 'config_invalid'
  /** A profile named by --profile, TSNODE_PROFILE or `current` is not in the config file. */
  | 'profile_not_found'
  /** A `${VAR}` the profile uses is not set. */
  | 'config_variable_unset'
  /** A destructive command was not told which nodes to act on. */
  | 'no_target'
  /** Writing the config file failed. */
  | 'config_write_failed'
  /** Another command holds the config file's lock too long. */
  | 'config_locked';

/**
 * The base of every error the CLI raises on purpose: a stable `code`, a message that names the
 * bad value, an optional hint saying what would be valid, and the exit code it means.
 * Only cli/ maps it to an exit (runtime.ts reportError, main.ts for parse errors).
 */
export class TsnodeError extends Error {
  readonly code: TsnodeErrorCode;
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;
  constructor(code: TsnodeErrorCode, message: string, opts: { hint?: string | undefined; exitCode?: ExitCode; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TsnodeError';
    this.code = code;
    this.hint = opts.hint;
    this.exitCode = opts.exitCode ?? EXIT.failed;
  }
}

/**
 * A problem with what the user asked for: exit 2, no stack trace, nothing sent.
 * The message names the field and the value; the hint says what would be valid.
 * (Constructor kept as it always was: `new UsageError(message, hint?, exitCode?)`.)
 */
export class UsageError extends TsnodeError {
  constructor(message: string, hint?: string, exitCode: ExitCode = EXIT.usage, code: TsnodeErrorCode = 'usage') {
    super(code, message, { hint, exitCode });
    this.name = 'UsageError';
  }
}

/** A flag value of the wrong form: `--timeout: "6x" is not a duration`. Exit 2. */
export class InvalidValueError extends UsageError {
  /** The flag or field (`--timeout`, `profiles.prod.smallest_span`). */
  readonly field: string;
  readonly value: string;
  constructor(field: string, value: string, reason: string, hint?: string) {
    super(`${field}: ${reason}`, hint, EXIT.usage, 'invalid_value');
    this.name = 'InvalidValueError';
    this.field = field;
    this.value = value;
  }
}
