import { PassThrough } from 'node:stream';
import { run } from '../../src/cli/main.js';
import type { CliResult } from './cli.js';

/**
 * Runs the CLI's own run() in this process with captured stdout and stderr: the same path as the
 * built bin (parsing, the action, error reporting, exit codes) minus process start-up and the
 * process's signals, for the many small cases where spawning a process per case would make the
 * suite slow. Spawned runs stay the end-to-end check.
 */
export async function runInProcess(
  args: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; now?: () => number; tty?: { columns: number; rows: number } } = {},
): Promise<CliResult> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  err.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await run(['node', 'tsnode', ...args], {
    // A terminal is a stdout that says so and has a size; stderr stays a pipe (no spinners).
    stdout: Object.assign(out, opts.tty ? { isTTY: true, ...opts.tty } : {}),
    stderr: err,
    stdin: new PassThrough(),
    env: { NO_COLOR: '1', ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
    now: opts.now ?? (() => Date.now()),
  });
  // Let the last writes reach the captured strings.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, signal: null, stdout, stderr };
}
