/**
 * The target of a resumed retention run: the nodes are the run file's, so only the settings come
 * from the flags, the environment and the config file (TLS, headers, header prefix), resolved as
 * for every command (config/target.ts). A new run resolves its nodes with openTarget (node-source.ts).
 */
import { loadConfig } from '../../config/load.js';
import { resolveTarget, type ResolvedTarget } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import type { TargetFlagValues } from './options.js';

export function resolveSettings(flags: TargetFlagValues, ctx: CliContext, command: string): ResolvedTarget {
  const loaded = loadConfig({ env: ctx.env, cwd: ctx.cwd });
  for (const w of loaded.warnings) ctx.log.warn(w);
  const target = resolveTarget({
    flags: { profile: ctx.profile, headerPrefix: flags.headerPrefix, cacert: flags.cacert, cert: flags.cert, key: flags.key, header: flags.header },
    env: ctx.env,
    config: loaded.config,
    cwd: ctx.cwd,
    home: loaded.home,
    command,
  });
  for (const w of target.warnings) ctx.log.warn(w);
  return target;
}
