import { TsnodeError } from '../tsnode-error.js';
import type { ExitCode } from './exit-codes.js';
import { EXIT } from './exit-codes.js';

/**
 * Stable, machine-readable error codes of the CLI (snake_case, as the node's own error codes).
 * A script may match on them; a new code may be added, an existing one never changes meaning.
 */
export type CliErrorCode =
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
  | 'config_locked'
  /** The local cluster (cluster up/down, the demo): local-cluster/state.ts ClusterError. */
  | 'port_in_use'
  | 'node_start_failed'
  | 'already_running'
  | 'bad_cluster_file'
  | 'interrupted'
  | 'bad_ring';

/**
 * The library's codes that mean "the input or the target is not usable, nothing was sent": exit 2.
 * Every other library code is exit 1 (a failure), `run_interrupted` is 130. This table is the one
 * place a library error becomes an exit code; a new code that means exit 2 goes here.
 */
const USAGE_CODES: ReadonlySet<string> = new Set([
  // protocol/ codecs, client/ headers and discovery, ring/, records/, replay/
  'invalid_value',
  'invalid_header',
  'no_cluster_endpoints',
  'no_topology',
  'topology_unavailable',
  'invalid_topology',
  'invalid_tag_query',
  'source',
  'record_syntax',
  'unsafe_file',
  'state',
  'usage',
  // server/: a start that contradicts the data directory or the topology given
  'invalid_config',
  'identity_mismatch',
  'not_in_topology',
  // retention/ and run/: refused before anything was sent
  'invalid_age',
  'invalid_policy',
  'unknown_span',
  'unsafe_wildcard',
  'invalid_run_state',
  'edited_run_state',
  'run_locked',
  'sweep_refused',
  'sweep_not_confirmed',
  'delete_selects_others',
]);

/** The exit code an error means: a CLI error says it; a library error's code decides. */
export function exitCodeOf(err: TsnodeError): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err.code === 'run_interrupted') return EXIT.interrupted;
  return USAGE_CODES.has(err.code) ? EXIT.usage : EXIT.failed;
}

/** A hint for a library error that carries none, where the CLI knows what to say (its flags). */
const HINTS: Readonly<Record<string, string>> = {
  invalid_header: 'write a header as "Name: value", e.g. --header "Authorization: Bearer $TOKEN"',
};

export function hintOf(err: TsnodeError): string | undefined {
  return err.hint ?? HINTS[err.code];
}

/** How each destructive command says it was refused, in front of the run core's reason. */
const REFUSING: Readonly<Record<string, string>> = {
  sweep: 'refusing to sweep',
  delete: 'refusing to delete',
  'retention apply': 'refusing to apply the retention policy',
};

/** The command a run-core refusal stopped, where its message does not say (a lock held, a delete's query too wide). */
function refusedCommand(err: TsnodeError): string | undefined {
  // RunLockedError's `run` (not imported: this file loads at startup, the run core must not).
  if (err.code === 'run_locked') return 'run' in err && typeof err.run === 'string' ? err.run : undefined;
  if (err.code === 'delete_selects_others') return 'delete';
  return undefined;
}

/** The retention core's errors (retention/errors.ts): each stops the run before anything is sent, which the CLI says. */
const RETENTION_CODES: ReadonlySet<string> = new Set(['invalid_age', 'invalid_policy', 'unknown_span', 'unsafe_wildcard', 'invalid_run_state', 'edited_run_state']);

/**
 * The message an error is reported with: its own, after the command's words when it refused a
 * run (`refusing to sweep: <node> is the target of another destructive run ...`), and saying
 * that nothing was sent for a retention error.
 */
export function messageOf(err: TsnodeError): string {
  if (RETENTION_CODES.has(err.code)) return `${err.message} (nothing was sent)`;
  const command = refusedCommand(err);
  const refusing = command === undefined ? undefined : REFUSING[command];
  return refusing ? `${refusing}: ${err.message}` : err.message;
}

export { TsnodeError };

/**
 * An error the CLI raises on purpose: a TsnodeError that knows its exit code, because deciding
 * exit codes is cli/'s job. A library error carries none: exitCodeOf maps its code.
 */
export class CliError extends TsnodeError {
  declare readonly code: CliErrorCode;
  readonly exitCode: ExitCode;
  constructor(code: CliErrorCode, message: string, opts: { hint?: string | undefined; exitCode?: ExitCode; cause?: unknown } = {}) {
    super(code, message, opts);
    this.name = 'CliError';
    this.exitCode = opts.exitCode ?? EXIT.failed;
  }
}

/**
 * A problem with what the user asked for: exit 2, no stack trace, nothing sent.
 * The message names the field and the value; the hint says what would be valid.
 * (Constructor kept as it always was: `new UsageError(message, hint?, exitCode?)`.)
 */
export class UsageError extends CliError {
  constructor(message: string, hint?: string, exitCode: ExitCode = EXIT.usage, code: CliErrorCode = 'usage') {
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
