/**
 * A run declares only the command it names (main.ts, commands/index.ts): `tsnode read` loads none
 * of the other 14 declarations. Which name that is, when every command must be declared instead,
 * and that a command declared alone is the very command the whole program declares.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandNamed, commands } from '../../src/cli/commands/index.js';
import { buildProgram } from '../../src/cli/main.js';

const valued = new Set(['--profile', '--state-dir']);
const noop = async (): Promise<void> => {};

describe('commandNamed', () => {
  it.each([
    [['read', 'uuid', 'cpu'], 'read'],
    [['--profile', 'read', 'status'], 'status'],
    [['--state-dir', '/tmp/x', '-q', '--no-color', 'sweep', 'cancel'], 'sweep'],
    [['--profile=lab', '-v', 'read'], 'read'],
    [['profile', 'set', 'lab'], 'profile'],
  ] as const)('%j runs %s alone', (args, name) => {
    expect(commandNamed(args, valued)).toBe(name);
  });

  it.each([[[]], [['--help']], [['-V']], [['raed', 'x']], [['help', 'read']], [['completion', 'bash']], [['--', 'read']], [['--profile']]] as const)(
    '%j declares every command',
    (args) => {
      expect(commandNamed(args, valued)).toBeUndefined();
    },
  );

  it("the program's valued options are the ones skipped", async () => {
    const program = await buildProgram(noop);
    const found = program.options.filter((o) => o.required || o.optional).map((o) => o.long);
    expect(new Set(found)).toEqual(valued);
  });
});

describe('a command declared alone', () => {
  const help = (cmd: Command): string[] => {
    const out = [cmd.helpInformation()];
    for (const sub of cmd.commands) out.push(...help(sub));
    return out;
  };
  it.each(commands.map(([name]) => name).filter((n) => n !== 'completion'))('%s: the same help, options and subcommands as in the whole program', async (name) => {
    const whole = (await buildProgram(noop)).commands.find((c) => c.name() === name)!;
    const alone = await buildProgram(noop, [name]);
    expect(alone.commands.map((c) => c.name())).toEqual([name]);
    expect(help(alone.commands[0]!)).toEqual(help(whole));
  });
});
