import { ConfigError, isLoopback, parseServeFlags } from '../../../server/config.js';
import { startServer, StartError } from '../../../server/server.js';
import { StoreOpenError } from '../../../server/sqlite-store.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { ServeOptions } from './command.js';

export async function serveAction(opts: ServeOptions, ctx: CliContext): Promise<ExitCode> {
  let config;
  try {
    config = parseServeFlags(opts, ctx.cwd);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, `expected ${err.expected}`);
    throw err;
  }
  if (!isLoopback(config.host)) {
    ctx.log.warn(`listening on ${config.host}, reachable from other machines: this node has no authentication, anyone who can reach it can write and delete data`);
  }
  let node;
  try {
    node = await startServer(config, {
      onInternalError: (err) => ctx.log.error(`internal: ${err instanceof Error ? (ctx.verbose ? err.stack : err.message) : String(err)}`),
      onNotice: (message) => ctx.log.warn(message),
      onFlush: opts.traceFlush ? (e) => ctx.log.info(`flush ${JSON.stringify(e)}`) : undefined,
    });
  } catch (err) {
    if (err instanceof StartError || err instanceof StoreOpenError) {
      ctx.log.error(err.message);
      return EXIT.failed;
    }
    throw err;
  }
  // Handlers go in before the ready line: whoever reads that line may signal us at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      ctx.signal.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener('abort', stop);
  });
  ctx.stdout.write(`tsnode node listening on ${node.url} (data: ${config.dataDir ?? 'memory'})\n`);
  await stopped;
  ctx.log.info('stopping: finishing in-flight requests');
  await node.close();
  ctx.log.info('stopped');
  return EXIT.ok;
}
