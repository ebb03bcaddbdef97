import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import type { Dispatcher } from 'undici';
import { createAgent, proxyFromEnv, type ProxySettings, type TlsOptions } from '../client/agent.js';
import { buildHeaders, HeaderError, redactHeaders, redactUrlCredentials, splitHeaderList } from '../client/headers.js';
import { timeLimitSignal } from '../client/errors.js';
import type { RequestLogEntry, WaitingNotice } from '../client/http.js';
import { NodeClient } from '../client/node-client.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../client/retry.js';
import type { HeaderPrefix } from '../protocol/index.js';
import type { Target } from './config/target.js';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import type { NetworkFlags, NetworkValues } from './network-options.js';
import { parseDuration } from './time.js';

export interface Network {
  dispatcher: Dispatcher;
  client(url: string): NodeClient;
  close(): Promise<void>;
  /**
   * The run's signal: Ctrl-C, and `--deadline` when given. Every NodeClient made here is bounded
   * by it already; commands may also use it for their own waits (polling).
   */
  signal: AbortSignal;
  /** The extra headers sent with every request, secrets redacted (for --dry-run and JSON summaries). */
  headers: Record<string, string>;
}

export function parseCount(text: string, field: string, min = 0): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} is not a whole number >= ${min}`);
  }
  return Number(text);
}

const SIZE_UNITS: Record<string, number> = { b: 1, k: 1000, kb: 1000, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** `4MiB`, `512KiB`, `1MB`, `65536`: a byte size. */
export function parseSize(text: string, field: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? SIZE_UNITS[(m[2] || 'b').toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) <= 0) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} is not a size`, 'use bytes or a unit: 65536, 512KiB, 4MiB, 1MB');
  }
  return Math.round(Number(m[1]) * unit);
}

const PEM_HINT: Record<'certificate' | 'key', string> = {
  certificate: 'expected a PEM file starting with -----BEGIN CERTIFICATE----- (convert DER with: openssl x509 -inform der -in FILE -out FILE.pem)',
  key: 'expected a PEM file starting with -----BEGIN PRIVATE KEY----- (or RSA/EC PRIVATE KEY), unencrypted',
};

/** Node's timers hold at most 2^31-1 ms (24.8 days); a longer timeout would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A network timeout flag: a duration no longer than the timers can hold. */
export function parseTimeout(text: string, flag: string): number {
  const ms = parseDuration(text, flag);
  if (ms > MAX_TIMEOUT_MS) throw new UsageError(`${flag}: ${JSON.stringify(text)} is longer than the longest timeout (24 days)`, 'e.g. 30s, 10m, 2h');
  return ms;
}

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

/** TLS options from the flags, or undefined when none was given. */
export function tlsFromFlags(flags: NetworkFlags, ctx: Pick<CliContext, 'cwd' | 'log'>): TlsOptions | undefined {
  if ((flags.cert === undefined) !== (flags.key === undefined)) {
    const [given, missing] = flags.cert !== undefined ? ['--cert', '--key'] : ['--key', '--cert'];
    throw new UsageError(`${given} needs ${missing}: mutual TLS takes a certificate and its private key`, `pass both: --cert client.pem --key client-key.pem`);
  }
  const tls: TlsOptions = {};
  if (flags.cacert !== undefined) tls.ca = loadPem(flags.cacert, '--cacert', 'certificate', ctx.cwd);
  if (flags.cert !== undefined && flags.key !== undefined) {
    tls.cert = loadPem(flags.cert, '--cert', 'certificate', ctx.cwd);
    tls.key = loadPem(flags.key, '--key', 'key', ctx.cwd);
  }
  if (flags.insecure) {
    tls.rejectUnauthorized = false;
    ctx.log.warn(`--insecure: ${UNVERIFIED}`);
  }
  return Object.keys(tls).length ? tls : undefined;
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

/** Strings over this many UTF-16 units cannot be made in V8 (~512 MiB): an answer larger cannot be read as text anyway. */
const MAX_ANSWER_LIMIT = 512 * 1024 * 1024;

/** `--max-answer`: bytes, or undefined for the per-request defaults. */
export function parseMaxAnswer(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const bytes = parseSize(text, '--max-answer');
  if (bytes > MAX_ANSWER_LIMIT) throw new UsageError(`--max-answer: ${JSON.stringify(text)} is more than 512MiB`, 'no answer larger than that can be read as text');
  return bytes;
}

/** The extra headers: TSNODE_HEADERS first, then each --header (a later one of the same name wins). */
export function headersFromFlags(flags: Pick<NetworkFlags, 'header'>, env: NodeJS.ProcessEnv): Record<string, string> {
  const envText = env.TSNODE_HEADERS;
  try {
    return buildHeaders([
      { field: 'TSNODE_HEADERS', lines: envText ? splitHeaderList(envText) : [] },
      { field: '--header', lines: flags.header ?? [] },
    ]);
  } catch (err) {
    if (err instanceof HeaderError) throw new UsageError(err.message, 'write a header as "Name: value", e.g. --header "Authorization: Bearer $TOKEN"');
    throw err;
  }
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

/** What openNetwork needs, parsed: from the string flags of a command without a flag table, or from a target. */
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

/** The string flags of a command that has no flag table yet (write, read, sweep): parsed here, as before. */
function settingsFromFlags(flags: NetworkFlags, ctx: CliContext): NetworkSettings {
  const connectTimeoutMs = parseTimeout(flags.connectTimeout, '--connect-timeout');
  const totalMs = parseTimeout(flags.requestTimeout, '--request-timeout');
  const headersMs = Math.min(totalMs, parseTimeout(flags.headersTimeout ?? '10s', '--headers-timeout'));
  const retries = parseCount(flags.retries, '--retries');
  if (retries > 100) throw new UsageError(`--retries: ${retries} is more than 100`, 'a few retries with backoff are enough; use --deadline to bound the time');
  const deadlineMs = flags.deadline === undefined ? undefined : parseTimeout(flags.deadline, '--deadline');
  const headers = headersFromFlags(flags, ctx.env);
  const redact = (flags.redact ?? []).map((n) => n.trim()).filter(Boolean);
  const maxAnswerBytes = parseMaxAnswer(flags.maxAnswer);
  const tls = tlsFromFlags(flags, ctx);
  return { connectTimeoutMs, totalMs, headersMs, retries, deadlineMs, headers, redact, maxAnswerBytes, tls, headerPrefix: undefined };
}

/**
 * TLS from a resolved target: its files are absolute paths, each named by the flag or config key
 * it came from (`--cacert`, `profiles.prod.cacert (~/.config/tsnode/config.yaml:7)`) in errors.
 */
export function tlsFromTarget(target: Pick<Target, 'tls'>, insecure: boolean, ctx: Pick<CliContext, 'cwd' | 'log'>): TlsOptions | undefined {
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
function settingsFromTarget(values: NetworkValues, target: Target, ctx: CliContext): NetworkSettings {
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
  target: Target;
}

export interface NetworkOptions {
  /** Overrides the target's header prefix (the legacy flags have none). */
  headerPrefix?: HeaderPrefix;
  connectionsPerNode?: number;
  retry?: Partial<RetryPolicy>;
}

/**
 * One dispatcher for the run and a factory of NodeClients sharing it; close it in `finally`.
 * Takes either a command's string flags (commands without a flag table) or `{ values, target }`:
 * the typed flags and the resolved target, whose headers (profile, TSNODE_HEADERS, --header),
 * TLS files and header prefix it uses. Commands on the flag tables get it from openTarget.
 */
export function openNetwork(input: NetworkFlags | TargetNetwork, ctx: CliContext, opts: NetworkOptions = {}): Network {
  const s = 'target' in input ? settingsFromTarget(input.values, input.target, ctx) : settingsFromFlags(input, ctx);
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
  const signal = s.deadlineMs === undefined ? ctx.signal : AbortSignal.any([ctx.signal, timeLimitSignal(s.deadlineMs, 'the overall deadline of the command', '--deadline')]);
  const dispatcher = createAgent({
    connectTimeoutMs: s.connectTimeoutMs,
    ...(opts.connectionsPerNode ? { connectionsPerNode: opts.connectionsPerNode } : {}),
    ...(s.tls ? { tls: s.tls } : {}),
    ...(proxy ? { proxy } : {}),
  });
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry, retries: s.retries };
  const onRequest = ctx.verbose ? (e: RequestLogEntry) => ctx.log.debug(formatEntry(e)) : undefined;
  const onWaiting = waitingLines(ctx);
  const headerPrefix = opts.headerPrefix ?? s.headerPrefix;
  const { headers, redact, maxAnswerBytes, totalMs, headersMs } = s;
  return {
    dispatcher,
    signal,
    headers: redactHeaders(headers, redact),
    client: (url) =>
      new NodeClient(url, {
        dispatcher,
        retry,
        signal,
        timeouts: { totalMs, headersMs, bodyMs: Math.min(totalMs, 30_000) },
        ...(maxAnswerBytes !== undefined ? { maxAnswerBytes } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(redact.length ? { redact } : {}),
        ...(onRequest ? { onRequest } : {}),
        onWaiting,
        ...(headerPrefix ? { headerPrefix } : {}),
        onRetry: (err, attempt, delay) => ctx.log.debug(`retry ${attempt} after ${delay} ms: ${err.message}`),
      }),
    close: () => dispatcher.close(),
  };
}
