import { PassThrough } from 'node:stream';
import { CommanderError } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import type { Runner } from '../../src/cli/action.js';
import { colourEnabled, makeLogger, type CliContext } from '../../src/cli/context.js';
import { reportError } from '../../src/cli/runtime.js';
import { TsnodeError } from '../../src/cli/errors.js';
import { EXIT, type ExitCode } from '../../src/cli/exit-codes.js';
import type { CliResult } from './cli.js';

/**
 * Runs the CLI in this process (commander parsing, the action, error reporting) with captured
 * stdout and stderr: the same path as the built bin minus process start-up, for the many small
 * cases where spawning a process per case would make the suite slow. Spawned runs stay the
 * end-to-end check.
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
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1', ...opts.env };
  const now = opts.now ?? (() => Date.now());
  const controller = new AbortController();
  let code: ExitCode = EXIT.ok;
  const stdoutStream = Object.assign(out, opts.tty ? { isTTY: true, ...opts.tty } : {});
  const makeContext = (): CliContext => {
    const colour = colourEnabled({ noColorFlag: false, env, isTTY: Boolean(opts.tty) });
    return {
      stdout: stdoutStream,
      stderr: err,
      stdin: new PassThrough(),
      env,
      cwd: opts.cwd ?? process.cwd(),
      interactive: false,
      colour,
      colourErr: false,
      verbose: false,
      signal: controller.signal,
      now,
      log: makeLogger({ stderr: err, interactive: false, verbose: false, now, paint: { warn: (s) => s, error: (s) => s, dim: (s) => s } }),
    };
  };
  const runner: Runner = async (load, o) => {
    const ctx = makeContext();
    try {
      code = await (await load())(o, ctx);
    } catch (e) {
      code = reportError(e, ctx);
    }
  };
  const program = buildProgram(runner);
  const override = (cmd: import('commander').Command): void => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => out.write(s), writeErr: (s) => err.write(s) });
    cmd.commands.forEach(override);
  };
  override(program);
  try {
    await program.parseAsync(['node', 'tsnode', ...args]);
  } catch (e) {
    // A flag value refused while the command line is read (flags.ts) is reported as main.ts does.
    if (e instanceof TsnodeError) code = reportError(e, makeContext());
    else if (e instanceof CommanderError) code = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    else throw e;
  }
  await new Promise((resolve) => setImmediate(resolve));
  return { code, signal: null, stdout, stderr };
}
