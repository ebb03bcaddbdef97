/**
 * The target of a retention command, on the issue-16 building blocks: the config file and
 * resolveTarget (flag > environment > profile > default, destructive commands never falling back
 * to a default node), a seed's ring discovered into a node list, and one network (undici Agent,
 * NodeClients) built from the resolved settings. Nothing here sends anything but GETs.
 *
 * (openTargetNetwork is what network.ts openNetwork does for the string flags of the older
 * commands; a command moving to typed flags can use it as it is.)
 */
import type { Dispatcher } from 'undici';
import { createAgent, proxyFromEnv, type TlsOptions } from '../../../client/agent.js';
import { discoverRing, DiscoveryError } from '../../../client/discovery.js';
import { NodeRequestError } from '../../../client/errors.js';
import { redactHeaders } from '../../../client/headers.js';
import type { RequestLogEntry } from '../../../client/http.js';
import { NodeClient } from '../../../client/node-client.js';
import { DEFAULT_RETRY } from '../../../client/retry.js';
import type { HeaderPrefix } from '../../../protocol/index.js';
import { loadConfig } from '../../config/load.js';
import { resolveTarget, type Target } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { loadPem, showProxy, warnUnverifiedEnv } from '../../network.js';
import type { TargetFlagValues } from './command.js';

export interface ResolvedTarget {
  target: Target;
  /** The node URLs (a seed's ring already discovered). */
  nodes: string[];
  /** Where they came from, for the prompt, the journal and stderr: `--nodes nodes.txt`, `profile prod`. */
  origin: string;
}

/** Resolves the target; with `destructive`, no node source is exit 2 (never a default node). */
export function resolveRetentionTarget(flags: TargetFlagValues, ctx: CliContext, opts: { destructive: boolean; command: string }): Target {
  const loaded = loadConfig({ env: ctx.env, cwd: ctx.cwd });
  for (const w of loaded.warnings) ctx.log.warn(w);
  const target = resolveTarget({
    flags: {
      profile: ctx.profile,
      nodes: flags.nodes,
      seed: flags.seed,
      headerPrefix: flags.headerPrefix,
      cacert: flags.cacert,
      cert: flags.cert,
      key: flags.key,
      header: flags.header,
    },
    env: ctx.env,
    config: loaded.config,
    cwd: ctx.cwd,
    home: loaded.home,
    destructive: opts.destructive,
    command: opts.command,
  });
  for (const w of target.warnings) ctx.log.warn(w);
  return target;
}

export interface TargetNetwork {
  dispatcher: Dispatcher;
  client(url: string): NodeClient;
  /** Ctrl-C, and --deadline when given. */
  signal: AbortSignal;
  /** The extra headers, secrets redacted (for summaries). */
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** One dispatcher for the run and NodeClients sharing it, from the resolved target and the typed flags. */
export function openTargetNetwork(target: Target, flags: TargetFlagValues, ctx: CliContext, opts: { signal?: AbortSignal } = {}): TargetNetwork {
  const tls: TlsOptions = {};
  if (target.tls.cacert) tls.ca = loadPem(target.tls.cacert.value, target.tls.cacert.from, 'certificate', ctx.cwd);
  if (target.tls.cert && target.tls.key) {
    tls.cert = loadPem(target.tls.cert.value, target.tls.cert.from, 'certificate', ctx.cwd);
    tls.key = loadPem(target.tls.key.value, target.tls.key.from, 'key', ctx.cwd);
  }
  if (flags.insecure) {
    tls.rejectUnauthorized = false;
    ctx.log.warn('--insecure: node certificates are NOT verified; anyone on the path can read or change this traffic, headers included');
  }
  warnUnverifiedEnv(ctx.env, ctx.log);
  const proxy = proxyFromEnv(ctx.env);
  if (proxy) ctx.log.debug(`proxy from environment: ${[proxy.httpProxy, proxy.httpsProxy].filter(Boolean).map((p) => showProxy(p!)).join(', ')}`);
  const base = opts.signal ?? ctx.signal;
  const signal = flags.deadline === undefined ? base : AbortSignal.any([base, AbortSignal.timeout(flags.deadline)]);
  const dispatcher = createAgent({ connectTimeoutMs: flags.connectTimeout, ...(Object.keys(tls).length ? { tls } : {}), ...(proxy ? { proxy } : {}) });
  const headers = target.headers;
  const redact = flags.redact.map((n) => n.trim()).filter(Boolean);
  const onRequest = ctx.verbose ? (e: RequestLogEntry) => ctx.log.debug(`${e.method} ${e.url} -> ${e.status ?? e.error ?? 'no answer'} in ${e.ms} ms`) : undefined;
  const prefix: HeaderPrefix = target.headerPrefix.value;
  return {
    dispatcher,
    signal,
    headers: redactHeaders(headers, redact),
    client: (url) =>
      new NodeClient(url, {
        dispatcher,
        retry: { ...DEFAULT_RETRY, retries: flags.retries },
        signal,
        timeouts: { totalMs: flags.requestTimeout, headersMs: Math.min(flags.requestTimeout, flags.headersTimeout), bodyMs: Math.min(flags.requestTimeout, 30_000) },
        headerPrefix: prefix,
        ...(flags.maxAnswer !== undefined ? { maxAnswerBytes: flags.maxAnswer } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(redact.length ? { redact } : {}),
        ...(onRequest ? { onRequest } : {}),
        onRetry: (err, attempt, delay) => ctx.log.debug(`retry ${attempt} after ${delay} ms: ${err.message}`),
      }),
    close: () => dispatcher.close(),
  };
}

/** The target's node URLs: its list, or the ring its seed runs (an error when it cannot be read: never another source). */
export async function targetNodes(target: Target, net: TargetNetwork, ctx: CliContext): Promise<ResolvedTarget> {
  if (target.source.kind === 'list') {
    ctx.log.info(target.describe());
    return { target, nodes: target.source.nodes, origin: target.origin };
  }
  const seed = target.source.seed;
  try {
    const ring = await discoverRing(net.client(seed), { signal: net.signal });
    ctx.log.info(target.describe(ring.nodes.length));
    if (!ring.verified) ctx.log.warn(`the topology from ${seed} hashes to ${ring.computedHash} here, not to the ${ring.hash} it announces`);
    return { target, nodes: ring.nodes.map((n) => n.url), origin: target.origin };
  } catch (err) {
    if (err instanceof DiscoveryError) throw new UsageError(`${target.origin}: ${err.message}`, err.hint);
    if (err instanceof NodeRequestError && err.code !== 'aborted') {
      throw new NodeRequestError(err.node, err.code, `cannot read the ring from ${target.origin}: ${err.detail}`, { retryable: false, hint: err.hint ?? 'is the seed a running node of the ring?', cause: err });
    }
    throw err;
  }
}
