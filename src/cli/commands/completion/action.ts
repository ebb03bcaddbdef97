import type { CliContext } from '../../context.js';
import { completionScript } from '../../completion/script.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { CompletionFlags } from './options.js';

export async function completionAction(flags: CompletionFlags, ctx: CliContext): Promise<ExitCode> {
  ctx.stdout.write(completionScript(flags.shell, flags.program));
  return EXIT.ok;
}
