import type { Writable, Readable } from 'node:stream';
import { redactUrlCredentials } from '../client/headers.js';
import { escapeLine } from './render/terminal-text.js';

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

/**
 * The one sink of every stderr line. Messages often quote a node (its error text, a metric
 * name): each is escaped here (see render/terminal-text.ts), so a node cannot drive the terminal
 * through a log line, and a URL's credentials never reach it. A message is one line: a line
 * break inside it is shown as `\n`, so no text can pass for a line of its own.
 */
export function makeLogger(opts: {
  stderr: Writable;
  interactive: boolean;
  verbose: boolean;
  /** --quiet: info lines are dropped; warnings, errors and their hints stay. */
  quiet?: boolean;
  paint: { warn(s: string): string; error(s: string): string; dim(s: string): string };
  now(): number;
  /** Colour is on for stderr: a caller's own colour around a whole message is kept. */
  colour?: boolean;
}): Logger {
  // Non-interactive logs get a timestamp so a CI log or a `2>file` tells when things happened.
  const stamp = (): string => (opts.interactive ? '' : `${new Date(opts.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')} `);
  // info() lines may come painted by the caller (a headline in green); the others are painted here, so nothing in them is kept.
  const safe = (m: string, keepStyle = false): string => escapeLine(redactUrlCredentials(m), keepStyle);
  const write = (line: string): void => {
    opts.stderr.write(`${stamp()}${line}\n`);
  };
  return {
    info: (m) => {
      if (!opts.quiet) write(safe(m, opts.colour ?? false));
    },
    hint: (m) => write(`  hint: ${safe(m)}`),
    warn: (m) => write(opts.paint.warn(`warning: ${safe(m)}`)),
    error: (m) => write(opts.paint.error(`error: ${safe(m)}`)),
    debug: (m) => {
      if (opts.verbose) write(opts.paint.dim(`debug: ${safe(m)}`));
    },
  };
}
