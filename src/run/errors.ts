import { TsnodeError } from '../tsnode-error.js';

/**
 * Errors of the run core. Each has a stable `code` and a `hint`; a run that throws one of them
 * sent nothing (the CLI maps them to exit 2).
 */
export class RunError extends TsnodeError {
  declare readonly code: 'run_locked' | 'run_interrupted';
  constructor(code: RunError['code'], message: string, hint?: string) {
    super(code, message, { hint });
    this.name = 'RunError';
  }
}

/** The run was interrupted (Ctrl-C, SIGTERM) before anything was sent. */
export class RunInterruptedError extends RunError {
  constructor(readonly phase: string) {
    super('run_interrupted', `interrupted ${phase}: nothing was sent`);
    this.name = 'RunInterruptedError';
  }
}
