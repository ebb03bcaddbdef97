import { Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import type { Runner } from './action.js';
import { completeWith } from './completion-hints.js';
import { EXIT, EXIT_CODES_HELP, type ExitCode } from './exit-codes.js';
import { commandNamed, commands } from './commands/index.js';
import { TsnodeError } from './errors.js';
import { parseError } from './parse-errors.js';
import type { GlobalOptions } from './global-options.js';
import { processIo, type CliIo } from './io.js';

export type { CliIo } from './io.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Builds the program. Pure declaration: loading it must stay cheap (see bench/startup). With
 * `args` (the arguments after the program name), only the command they name is declared, when it
 * can stand alone (commands/index.ts commandNamed); without, every command.
 */
export async function buildProgram(runner: Runner, args?: readonly string[]): Promise<Command> {
  const program = new Command('tsnode')
    .description('Retention sweeps, rollup reads and record replay across the nodes of a time-series cluster.')
    .version(pkg.version, '-V, --version')
    .option('--no-color', 'disable colour (NO_COLOR and FORCE_COLOR are honoured too)')
    .option('-v, --verbose', 'log requests and show stack traces (also DEBUG=tsnode)', false)
    .option('-q, --quiet', 'print only results and errors: no progress, no information on stderr', false)
    .option('--no-progress', 'no spinners, progress bars or live tables (logs and results stay)')
    .addOption(
      completeWith(new Option('--profile <name>', 'the profile (named cluster) to act on; default $TSNODE_PROFILE, else the current one (tsnode profile list)'), {
        kind: 'profiles',
      }),
    )
    .addOption(
      completeWith(
        new Option('--state-dir <dir>', 'where the journal, run files and locks live; default $TSNODE_STATE_DIR, else $XDG_STATE_HOME/tsnode, else ~/.local/state/tsnode'),
        { kind: 'files' },
      ),
    )
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode demo                                      the whole job on a throw-away 3-node local cluster
  $ tsnode cluster up --detach --profile lab         3 local nodes on 8112-8114, registered as profile lab
  $ tsnode serve --port 8112                         run a local reference node
  $ tsnode status --profile lab                      sweep status of every node of profile lab
  $ tsnode nodes --seed http://127.0.0.1:8112        every node of the ring, discovered from one
  $ tsnode sweep --profile lab --before 90d          delete data older than 90 days on every node of lab
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 6h
  $ tsnode write records.ndjson --nodes nodes.txt    replay records, with rejects and resume
  $ tsnode profile set prod --nodes db1:8112,db2:8112 then: tsnode status --profile prod
  $ source <(tsnode completion bash)                 tab completion (bash, zsh or fish)

${EXIT_CODES_HELP}`,
    );
  const valued = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f) => f !== undefined)));
  const only = args && commandNamed(args, valued);
  const declarations = await Promise.all(commands.filter(([name]) => only === undefined || name === only).map(([, load]) => load()));
  for (const declare of declarations) declare(program, runner);
  return program;
}

/**
 * The entry point: parses `argv`, runs the command, reports what escapes it, and returns the exit
 * code. Without `io` it runs as the process (its streams, Ctrl-C, a closed stdout) and is the only
 * place in tsnode that sets the process's exit code; with `io` (tests run the CLI in process) it
 * touches none of that.
 */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export async function run(argv: string[], io?: CliIo): Promise<ExitCode> {
  const own = io === undefined;
  const host = io ?? processIo();
  if (own) {
    // `tsnode read ... | head`: a closed pipe is the reader's choice, not an error worth a trace.
    // Any other stdout failure (a full disk behind `> file`) is one line on stderr, not a trace.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
      process.stderr.write(`error: cannot write the output: ${err.message}\n`);
      process.exit(EXIT.failed);
    });
  }
  const controller = new AbortController();
  let interrupts = 0;
  // SIGINT (Ctrl-C) and SIGTERM (systemd stopping a unit, kill) mean the same to every command:
  // the run's signal aborts, and the command (the run core, for a destructive one) decides what
  // an interruption means. First signal: stop cleanly and say what was done. Second: leave now.
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT.interrupted);
    controller.abort(new Error(signal === 'SIGTERM' ? 'terminated (SIGTERM)' : 'interrupted'));
  };
  let code: ExitCode = EXIT.ok;
  let program: Command | undefined;
  const runner: Runner = async (load, opts) => {
    const { createContext, reportError } = await import('./runtime.js');
    const globals = program!.opts<GlobalOptions>();
    const ctx = await createContext(globals, controller.signal, host);
    if (own) for (const s of SIGNALS) process.on(s, onSignal);
    try {
      const action = await load();
      // bin/tsnode.js keeps TurboFan off while the modules load; the command's own work may need it.
      if (own) setFlagsFromString('--turbofan');
      // A command's --seed and --profile are its own business: it resolves them (openTarget) after
      // checking its own flags, so a bad flag sends nothing, not even the seed's discovery.
      code = await action(opts, ctx);
    } catch (err) {
      code = reportError(err, ctx);
    } finally {
      if (own) for (const s of SIGNALS) process.off(s, onSignal);
    }
  };
  program = await buildProgram(runner, argv.slice(2));
  const parsing = prepareForParsing(program, io);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // Help and version exit 0 (commander printed them); a parse error is reported like any usage error.
    if (err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed')) {
      code = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else {
      const usage = err instanceof CommanderError ? parseError(err, parsing.failedIn() ?? program) : err;
      if (!(usage instanceof TsnodeError)) throw err;
      const { createContext, reportError } = await import('./runtime.js');
      code = reportError(usage, await createContext(program.opts<GlobalOptions>(), controller.signal, host));
    }
  }
  if (own) process.exitCode = code;
  return code;
}

/**
 * Makes every command throw instead of exiting and keeps commander's own error text off stderr:
 * main.ts reports parse errors in tsnode's style (parse-errors.ts). Returns the command whose
 * parse failed, for the "did you mean" candidates.
 */
export function prepareForParsing(program: Command, io?: CliIo): { failedIn(): Command | undefined } {
  let failed: Command | undefined;
  const visit = (cmd: Command): void => {
    cmd.exitOverride((err) => {
      failed ??= cmd;
      throw err;
    });
    cmd.configureOutput({ outputError: () => {} });
    // Help and version go to the streams run() was given (commander writes to the process's otherwise).
    if (io) cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
    cmd.showSuggestionAfterError(false);
    cmd.commands.forEach(visit);
  };
  visit(program);
  return { failedIn: () => failed };
}
