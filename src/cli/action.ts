import type { CliContext } from './context.js';
import type { ExitCode } from './exit-codes.js';

/** A command's core: takes its parsed options and the context, returns the exit code, never exits. */
export type Action<O> = (opts: O, ctx: CliContext) => Promise<ExitCode>;

/**
 * Runs an action that is loaded only when its command is chosen, so `--help` and `--version`
 * never pay for undici, zod, SQLite or the renderers.
 */
export type Runner = <O>(load: () => Promise<Action<O>>, opts: O) => Promise<void>;
