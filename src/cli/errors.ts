import type { ExitCode } from './exit-codes.js';
import { EXIT } from './exit-codes.js';

/**
 * A problem with what the user asked for: exit 2, no stack trace, nothing sent.
 * The message names the field and the value; the hint says what would be valid.
 */
export class UsageError extends Error {
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;
  constructor(message: string, hint?: string, exitCode: ExitCode = EXIT.usage) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
    this.exitCode = exitCode;
  }
}
