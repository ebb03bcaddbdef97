import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import type { Runner } from './action.js';
import { EXIT, EXIT_CODES_HELP, type ExitCode } from './exit-codes.js';
import { commands } from './commands/index.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

export interface GlobalOptions {
  color: boolean;
  verbose: boolean;
}

/** Builds the program. Pure declaration: loading it must stay cheap (see bench/startup). */
export function buildProgram(runner: Runner): Command {
  const program = new Command('tsnode')
    .description('Retention sweeps, rollup reads and record replay across the nodes of a time-series cluster.')
    .version(pkg.version, '-V, --version')
    .option('--no-color', 'disable colour (NO_COLOR and FORCE_COLOR are honoured too)')
    .option('-v, --verbose', 'log requests and show stack traces (also DEBUG=tsnode)', false)
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode demo                                      the whole job on a throw-away 3-node local cluster
  $ tsnode cluster up --detach                       3 local nodes on 8112-8114 (tsnode cluster down stops them)
  $ tsnode serve --port 8112                         run a local reference node
  $ tsnode status --nodes nodes.txt                  sweep status of every node
  $ tsnode nodes --seed http://127.0.0.1:8112        every node of the ring, discovered from one
  $ tsnode sweep --before 90d --types nnt,histogram  delete data older than 90 days on every node
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 6h
  $ tsnode write records.ndjson --nodes nodes.txt    replay records, with rejects and resume
  $ source <(tsnode completion bash)                 tab completion (bash or zsh)

${EXIT_CODES_HELP}`,
    );
  for (const declare of commands) declare(program, runner);
  return program;
}

/** The process entry point: the only place in tsnode that sets an exit code. */
export async function run(argv: string[]): Promise<void> {
  // `tsnode read ... | head`: a closed pipe is the reader's choice, not an error worth a trace.
  // Any other stdout failure (a full disk behind `> file`) is one line on stderr, not a trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    process.stderr.write(`error: cannot write the output: ${err.message}\n`);
    process.exit(EXIT.failed);
  });
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    // First Ctrl-C: let the command stop cleanly and print what it did. Second: leave now.
    if (interrupts > 1) process.exit(EXIT.interrupted);
    controller.abort(new Error('interrupted'));
  };
  let program: Command | undefined;
  const runner: Runner = async (load, opts) => {
    const { createContext, reportError } = await import('./runtime.js');
    const globals = program!.opts<GlobalOptions>();
    const ctx = await createContext(globals, controller.signal);
    process.on('SIGINT', onSigint);
    let code: ExitCode;
    try {
      const action = await load();
      // --seed: the ring's nodes become the command's node list before it runs (cli/node-source.ts).
      if (typeof (opts as { seed?: unknown }).seed === 'string') {
        const { applySeed, hasSeed } = await import('./node-source.js');
        if (hasSeed(opts)) await applySeed(opts, ctx);
      }
      code = await action(opts, ctx);
    } catch (err) {
      code = reportError(err, ctx);
    } finally {
      process.off('SIGINT', onSigint);
    }
    process.exitCode = code;
  };
  program = buildProgram(runner);
  const override = (cmd: Command): void => {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  };
  override(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other parse error is a usage error.
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    throw err;
  }
}
