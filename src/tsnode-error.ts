/**
 * The base of every error tsnode throws on purpose, in every layer: a stable `code` a script may
 * match on (snake_case; a new code may be added, an existing one never changes meaning), a message
 * that names the bad value, and an optional hint saying what would be valid or what to do.
 * It imports nothing, so every layer (ring and tags included) may derive from it. What a code
 * means for an exit status is the CLI's business (cli/errors.ts exitCodeOf), never the library's.
 */
export class TsnodeError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  constructor(code: string, message: string, opts: { hint?: string | undefined; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TsnodeError';
    this.code = code;
    this.hint = opts.hint;
  }
}
