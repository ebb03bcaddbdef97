import type { CliContext } from '../../context.js';
import { completionScript } from '../../completion.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { CompletionFlags } from './command.js';

export async function completionAction(flags: CompletionFlags, ctx: CliContext): Promise<ExitCode> {
  // Loaded here, not at the top: main.ts imports every command declaration, including this one.
  const { buildProgram } = await import('../../main.js');
  const noop: Parameters<typeof buildProgram>[0] = async () => {};
  ctx.stdout.write(completionScript(flags.shell, buildProgram(noop)));
  return EXIT.ok;
}

