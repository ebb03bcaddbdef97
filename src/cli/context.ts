import type { Writable, Readable } from 'node:stream';

/** Decides colour the way users expect: --no-color, then NO_COLOR, then FORCE_COLOR, then "is it a TTY". */
export function colourEnabled(opts: { noColorFlag: boolean; env: NodeJS.ProcessEnv; isTTY: boolean }): boolean {
  if (opts.noColorFlag) return false;
  if (opts.env.NO_COLOR !== undefined && opts.env.NO_COLOR !== '') return false;
  const force = opts.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return opts.isTTY && opts.env.TERM !== 'dumb';
}

export interface Logger {
  /** Progress and information (stderr). */
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** The `  hint: ...` line under an error; printed even with --quiet. */
  hint(message: string): void;
  /** Only with --verbose or DEBUG=tsnode. */
  debug(message: string): void;
}

/**
 * Everything a command needs from the outside world, passed in rather than imported, so tests
 * can run commands in process and so nothing below cli/ touches process.*.
 */
export interface CliContext {
  stdout: Writable & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number; rows?: number };
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether stderr is an interactive terminal and we are not in CI: spinners and live redraws. */
  interactive: boolean;
  /** Colour on stdout (tables). */
  colour: boolean;
  /** Colour on stderr (logs, progress). */
  colourErr: boolean;
  verbose: boolean;
  /** -q/--quiet: print results and errors only (no progress, no information lines). Absent: false. */
  quiet?: boolean;
  /** --no-progress sets false: no spinners, bars or live tables. Absent: true. */
  progress?: boolean;
  /** The global --profile, when given (target resolution reads it: config/target.ts). */
  profile?: string | undefined;
  log: Logger;
  /** Aborted on the first Ctrl-C. */
  signal: AbortSignal;
  now(): number;
}

/** Whether progress (spinners, bars, live tables) may be drawn: not with --quiet or --no-progress. */
export function showsProgress(ctx: Pick<CliContext, 'quiet' | 'progress'>): boolean {
  return ctx.quiet !== true && ctx.progress !== false;
}

export function makeLogger(opts: {
  stderr: Writable;
  interactive: boolean;
  verbose: boolean;
  /** --quiet: info lines are dropped; warnings, errors and their hints stay. */
  quiet?: boolean;
  paint: { warn(s: string): string; error(s: string): string; dim(s: string): string };
  now(): number;
}): Logger {
  // Non-interactive logs get a timestamp so a CI log or a `2>file` tells when things happened.
  const stamp = (): string => (opts.interactive ? '' : `${new Date(opts.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')} `);
  const write = (line: string): void => {
    opts.stderr.write(`${stamp()}${line}\n`);
  };
  return {
    info: (m) => {
      if (!opts.quiet) write(m);
    },
    hint: (m) => write(`  hint: ${m}`),
    warn: (m) => write(opts.paint.warn(`warning: ${m}`)),
    error: (m) => write(opts.paint.error(`error: ${m}`)),
    debug: (m) => {
      if (opts.verbose) write(opts.paint.dim(`debug: ${m}`));
    },
  };
}
