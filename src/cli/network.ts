import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { proxyFromEnv, type ProxySettings, type TlsOptions } from '../client/agent.js';
import { redactUrlCredentials } from '../client/headers.js';
import type { RequestLogEntry, WaitingNotice } from '../client/http.js';
import { openNodeNetwork, type Network, type NetworkSettings as NodeNetworkSettings } from '../client/network.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../client/retry.js';
import type { HeaderPrefix } from '../protocol/index.js';
import type { ResolvedTarget } from './config/target.js';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import type { NetworkValues } from './network-options.js';

export type { Network } from '../client/network.js';

const PEM_HINT: Record<'certificate' | 'key', string> = {
  certificate: 'expected a PEM file starting with -----BEGIN CERTIFICATE----- (convert DER with: openssl x509 -inform der -in FILE -out FILE.pem)',
  key: 'expected a PEM file starting with -----BEGIN PRIVATE KEY----- (or RSA/EC PRIVATE KEY), unencrypted',
};

/** Reads a PEM file named by a flag; errors name the flag and the path (as `shown`, default as given). */
export function loadPem(path: string, flag: string, kind: 'certificate' | 'key', cwd: string, shown = path): string {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new UsageError(`${flag}: cannot read ${shown}: ${why}`, PEM_HINT[kind]);
  }
  const want = kind === 'certificate' ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/;
  if (!want.test(text)) throw new UsageError(`${flag}: ${shown} is not a PEM ${kind}`, PEM_HINT[kind]);
  if (kind === 'key' && /ENCRYPTED PRIVATE KEY|Proc-Type: 4,ENCRYPTED/.test(text)) {
    throw new UsageError(`${flag}: ${shown} is an encrypted private key`, 'decrypt it first: openssl pkey -in KEY -out KEY.plain.pem');
  }
  return text;
}

const UNVERIFIED = 'node certificates are NOT verified; anyone on the path can read or change this traffic, headers included';

/**
 * Node's TLS reads NODE_TLS_REJECT_UNAUTHORIZED=0 as "verify nothing" for every connection that
 * does not say otherwise: the same hole as --insecure, so the same warning (also with --insecure:
 * dropping the flag would not close it).
 */
export function warnUnverifiedEnv(env: NodeJS.ProcessEnv, log: CliContext['log']): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') log.warn(`NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment: ${UNVERIFIED}`);
}

/** A proxy URL for a log line, with any credentials in it hidden. */
export function showProxy(url: string): string {
  return redactUrlCredentials(url);
}

/**
 * "waiting for <node> (no answer for 5 s; ...)": a node that accepts connections and does not
 * answer is visible while tsnode waits, not silence. One line per node per moment (a phase may
 * ask one node two things at once).
 */
function waitingLines(ctx: CliContext): (w: WaitingNotice) => void {
  const last = new Map<string, number>();
  return (w) => {
    const at = ctx.now();
    if (at - (last.get(w.node) ?? -Infinity) < 1000) return;
    last.set(w.node, at);
    ctx.log.info(`waiting for ${w.node} (no answer for ${Math.round(w.waitedMs / 1000)} s; giving up at ${w.headersMs / 1000} s, --headers-timeout)`);
  };
}

function formatEntry(e: RequestLogEntry): string {
  const head = Object.entries(e.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  return `${e.method} ${e.url} -> ${e.status ?? e.error ?? 'no answer'} in ${e.ms} ms${head ? ` [${head}]` : ''}`;
}

/** What openNetwork needs, parsed: from a command's typed flags and its target, or given plainly (plainNetwork). */
interface NetworkSettings {
  connectTimeoutMs: number;
  totalMs: number;
  headersMs: number;
  retries: number;
  deadlineMs: number | undefined;
  headers: Record<string, string>;
  redact: string[];
  maxAnswerBytes: number | undefined;
  tls: TlsOptions | undefined;
  headerPrefix: HeaderPrefix | undefined;
}

/**
 * TLS from a resolved target: its files are absolute paths, each named by the flag or config key
 * it came from (`--cacert`, `profiles.prod.cacert (~/.config/tsnode/config.yaml:7)`) in errors.
 */
export function tlsFromTarget(target: Pick<ResolvedTarget, 'tls'>, insecure: boolean, ctx: Pick<CliContext, 'cwd' | 'log'>): TlsOptions | undefined {
  const tls: TlsOptions = {};
  const { cacert, cert, key } = target.tls;
  // The target holds absolute paths; a file under the working directory is shown as typed there.
  const shown = (p: string): string => (p.startsWith(`${ctx.cwd}${sep}`) ? relative(ctx.cwd, p) : p);
  if (cacert) tls.ca = loadPem(cacert.value, cacert.from, 'certificate', ctx.cwd, shown(cacert.value));
  if (cert && key) {
    tls.cert = loadPem(cert.value, cert.from, 'certificate', ctx.cwd, shown(cert.value));
    tls.key = loadPem(key.value, key.from, 'key', ctx.cwd, shown(key.value));
  }
  if (insecure) {
    tls.rejectUnauthorized = false;
    ctx.log.warn(`--insecure: ${UNVERIFIED}`);
  }
  return Object.keys(tls).length ? tls : undefined;
}

/** The typed flags of networkFlags() and the target they resolved to (headers, TLS, header prefix). */
function settingsFromTarget(values: NetworkValues, target: ResolvedTarget, ctx: CliContext): NetworkSettings {
  return {
    connectTimeoutMs: values.connectTimeout,
    totalMs: values.requestTimeout,
    headersMs: Math.min(values.requestTimeout, values.headersTimeout),
    retries: values.retries,
    deadlineMs: values.deadline,
    headers: target.headers,
    redact: values.redact.map((n) => n.trim()).filter(Boolean),
    maxAnswerBytes: values.maxAnswer,
    tls: tlsFromTarget(target, values.insecure, ctx),
    headerPrefix: target.headerPrefix.value,
  };
}

/** A command on the flag tables: its network values and the target resolveTarget made of them. */
export interface TargetNetwork {
  values: NetworkValues;
  target: ResolvedTarget;
}

export interface NetworkOptions {
  /** Overrides the target's header prefix. */
  headerPrefix?: HeaderPrefix;
  connectionsPerNode?: number;
  retry?: Partial<RetryPolicy>;
}

/**
 * One dispatcher for the run and a factory of NodeClients sharing it; close it in `finally`.
 * Takes `{ values, target }`: the typed flags and the resolved target, whose headers (profile,
 * TSNODE_HEADERS, --header), TLS files and header prefix it uses. Commands get it from openTarget.
 */
export function openNetwork(input: TargetNetwork, ctx: CliContext, opts: NetworkOptions = {}): Network {
  const settings = networkSettings(input, ctx, opts);
  return openNodeNetwork(settings);
}

/** What openNetwork opens, resolved (the warnings said, nothing sent): for the run core, which connects itself. */
export function networkSettings(input: TargetNetwork, ctx: CliContext, opts: NetworkOptions = {}): NodeNetworkSettings {
  return resolved(settingsFromTarget(input.values, input.target, ctx), ctx, opts);
}

/** Plain timeouts for a command that talks to nodes it started itself (the cluster commands): no target, headers or TLS. */
export interface PlainNetwork {
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  retries: number;
}

/** openNetwork for nodes this host started (a local ring): the given timeouts and nothing else. */
export function plainNetwork(p: PlainNetwork, ctx: CliContext, opts: NetworkOptions = {}): Network {
  const settings: NetworkSettings = {
    connectTimeoutMs: p.connectTimeoutMs,
    totalMs: p.requestTimeoutMs,
    headersMs: p.requestTimeoutMs,
    retries: p.retries,
    deadlineMs: undefined,
    headers: {},
    redact: [],
    maxAnswerBytes: undefined,
    tls: undefined,
    headerPrefix: undefined,
  };
  const all = resolved(settings, ctx, opts);
  return openNodeNetwork(all);
}

/** The settings of `openNodeNetwork`, with the CLI's part: the warnings, the proxy from the environment, the log lines. */
function resolved(s: NetworkSettings, ctx: CliContext, opts: NetworkOptions): NodeNetworkSettings {
  warnUnverifiedEnv(ctx.env, ctx.log);
  const proxy: ProxySettings | undefined = proxyFromEnv(ctx.env);
  if (proxy) {
    const shown = [
      proxy.httpProxy ? `http via ${showProxy(proxy.httpProxy)}` : undefined,
      proxy.httpsProxy ? `https via ${showProxy(proxy.httpsProxy)}` : undefined,
      proxy.noProxy ? `direct for ${proxy.noProxy}` : undefined,
    ].filter(Boolean);
    ctx.log.debug(`proxy from environment: ${shown.join('; ')}`);
  }
  const headerPrefix = opts.headerPrefix ?? s.headerPrefix;
  return {
    connectTimeoutMs: s.connectTimeoutMs,
    totalMs: s.totalMs,
    headersMs: s.headersMs,
    retry: { ...DEFAULT_RETRY, ...opts.retry, retries: s.retries },
    signal: ctx.signal,
    ...(s.deadlineMs !== undefined ? { deadline: { ms: s.deadlineMs, limitName: '--deadline' } } : {}),
    headers: s.headers,
    redact: s.redact,
    ...(s.maxAnswerBytes !== undefined ? { maxAnswerBytes: s.maxAnswerBytes } : {}),
    ...(s.tls ? { tls: s.tls } : {}),
    ...(proxy ? { proxy } : {}),
    ...(headerPrefix ? { headerPrefix } : {}),
    ...(opts.connectionsPerNode ? { connectionsPerNode: opts.connectionsPerNode } : {}),
    ...(ctx.verbose ? { onRequest: (e: RequestLogEntry) => ctx.log.debug(formatEntry(e)) } : {}),
    onWaiting: waitingLines(ctx),
    onRetry: (err, attempt, delay) => ctx.log.debug(`retry ${attempt} after ${delay} ms: ${err.message}`),
  };
}
