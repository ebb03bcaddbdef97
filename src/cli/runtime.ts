import { resolve } from 'node:path';
import type { z } from 'zod';
import { formatIssues } from '../protocol/index.js';
import { colourEnabled, makeLogger, type CliContext } from './context.js';
import { CliError, exitCodeOf, hintOf, messageOf, TsnodeError } from './errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import type { GlobalOptions } from './global-options.js';
import type { CliIo } from './io.js';

/** The context a command runs in, built from the streams, environment and directory run() was given. */
export async function createContext(globals: GlobalOptions, signal: AbortSignal, io: CliIo): Promise<CliContext> {
  // --state-dir is TSNODE_STATE_DIR for this run (absolute), so every reader of the state dir sees one value.
  const env = globals.stateDir !== undefined ? { ...io.env, TSNODE_STATE_DIR: resolve(io.cwd, globals.stateDir) } : io.env;
  const noColorFlag = !globals.color;
  const colour = colourEnabled({ noColorFlag, env, isTTY: Boolean(io.stdout.isTTY) });
  const colourErr = colourEnabled({ noColorFlag, env, isTTY: Boolean(io.stderr.isTTY) });
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  const interactive = Boolean(io.stderr.isTTY) && !ci && env.TERM !== 'dumb';
  const verbose = globals.verbose || /(^|,)tsnode(,|$)/.test(env.DEBUG ?? '');
  // The painter only when stderr takes colour: a piped or redirected run never loads it.
  const paint = colourErr ? (await import('./render/painter.js')).painter(true) : undefined;
  const plain = (s: string): string => s;
  const now = (): number => io.now();
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    // Read when a command asks (io.ts processIo says why).
    get stdin() {
      return io.stdin;
    },
    env,
    cwd: io.cwd,
    interactive,
    colour,
    colourErr,
    verbose,
    quiet: globals.quiet === true,
    progress: globals.progress !== false && globals.quiet !== true,
    profile: globals.profile,
    signal,
    now,
    log: makeLogger({
      stderr: io.stderr,
      interactive,
      verbose,
      quiet: globals.quiet === true,
      now,
      colour: colourErr,
      paint: paint ? { warn: (s) => paint.yellow(s), error: (s) => paint.red(s), dim: (s) => paint.dim(s) } : { warn: plain, error: plain, dim: plain },
    }),
  };
}

/** A stack trace, one log line per frame (the logger shows a line break inside a message as `\n`). */
function debugStack(ctx: CliContext, stack: string): void {
  for (const line of stack.split('\n')) ctx.log.debug(line);
}

/**
 * A schema's parse() that threw. Told by name, not `instanceof z.ZodError`: that would load zod
 * (~95 modules) on every command's start-up, and only a command that parses by schema can throw one.
 */
function isZodError(err: unknown): err is z.ZodError {
  return err instanceof Error && err.name === 'ZodError' && Array.isArray((err as { issues?: unknown }).issues);
}

/**
 * Maps an error escaping a command to a message on stderr and an exit code, once for every
 * command: a TsnodeError (the library's or the CLI's) by its code (errors.ts exitCodeOf, hintOf).
 */
export function reportError(err: unknown, ctx: CliContext): ExitCode {
  if (err instanceof TsnodeError) {
    // Our own words, sometimes several lines (a node's start-up log quoted under them): one log line each.
    const [first, ...more] = messageOf(err).split('\n');
    ctx.log.error(first!);
    for (const line of more) ctx.log.info(line);
    const hint = hintOf(err);
    if (hint) ctx.log.hint(hint);
    ctx.log.debug(`error code: ${err.code}`);
    // A library failure (not a refusal): where it came from helps a report.
    const exit = exitCodeOf(err);
    if (ctx.verbose && exit === EXIT.failed && !(err instanceof CliError) && err.stack) debugStack(ctx, err.stack);
    return exit;
  }
  if (isZodError(err)) {
    ctx.log.error(formatIssues(err.issues));
    return EXIT.usage;
  }
  if (ctx.signal.aborted) return EXIT.interrupted;
  const e = err instanceof Error ? err : new Error(String(err));
  ctx.log.error(`internal error: ${e.message}`);
  if (ctx.verbose && e.stack) debugStack(ctx, e.stack);
  else ctx.log.info('  (run with --verbose for details, and please report it)');
  return EXIT.failed;
}
