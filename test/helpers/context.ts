import { PassThrough, Writable } from 'node:stream';
import { makeLogger, type CliContext } from '../../src/cli/context.js';

/** A CliContext for running CLI-layer code in process, with stdout and stderr captured. */
export function testContext(opts: { env?: NodeJS.ProcessEnv; verbose?: boolean; cwd?: string; signal?: AbortSignal } = {}): {
  ctx: CliContext;
  out: () => string;
  err: () => string;
} {
  let out = '';
  let err = '';
  // Writables that append synchronously, so a test can read what was written right after the call.
  const stdout = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      out += chunk.toString();
      cb();
    },
  });
  const stderr = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      err += chunk.toString();
      cb();
    },
  });
  const now = (): number => Date.now();
  const verbose = opts.verbose ?? false;
  const id = (s: string): string => s;
  const ctx: CliContext = {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
    interactive: false,
    colour: false,
    colourErr: false,
    verbose,
    signal: opts.signal ?? new AbortController().signal,
    now,
    log: makeLogger({ stderr, interactive: false, verbose, now, paint: { warn: id, error: id, dim: id } }),
  };
  return { ctx, out: () => out, err: () => err };
}
