/**
 * Errors of the run core. Each has a stable `code` and a `hint`; a run that throws one of them
 * sent nothing (the CLI maps them to exit 2).
 */
export class RunError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
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
