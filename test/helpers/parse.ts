/**
 * Runs argv through the real program with every action stubbed: what command would run, with
 * which options, and which global flags; or the usage error the user would see. Nothing is loaded
 * beyond the declarations, nothing is sent. The parser contract test (test/unit/cli-parser.test.ts) uses it.
 */
import { CommanderError, type Command } from 'commander';
import type { Runner } from '../../src/cli/action.js';
import { CliError } from '../../src/cli/errors.js';
import { buildProgram, prepareForParsing } from '../../src/cli/main.js';
import { commandPath, parseError } from '../../src/cli/parse-errors.js';

export type ParseResult =
  { ok: true; command: string; options: Record<string, unknown>; globals: Record<string, unknown> } | { ok: false; error: CliError } | { ok: false; help: true };

export async function parseArgv(argv: readonly string[]): Promise<ParseResult> {
  let options: Record<string, unknown> | undefined;
  const runner: Runner = async (_load, opts) => {
    options = opts as Record<string, unknown>;
  };
  const program = await buildProgram(runner);
  let ran: Command | undefined;
  program.hook('preAction', (_self, action) => {
    ran = action;
  });
  const parsing = prepareForParsing(program);
  const quiet = (cmd: Command): void => {
    cmd.configureOutput({ writeOut: () => {}, writeErr: () => {} });
    cmd.commands.forEach(quiet);
  };
  quiet(program);
  try {
    await program.parseAsync(['node', 'tsnode', ...argv]);
  } catch (err) {
    if (err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed')) return { ok: false, help: true };
    const usage = err instanceof CommanderError ? parseError(err, parsing.failedIn() ?? program) : err;
    if (usage instanceof CliError) return { ok: false, error: usage };
    throw err;
  }
  if (!ran || !options) throw new Error(`argv ${JSON.stringify(argv)} ran no action`);
  return { ok: true, command: commandPath(ran).replace(/^tsnode ?/, ''), options: { ...options }, globals: program.opts() };
}
