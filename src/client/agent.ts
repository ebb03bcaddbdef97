import { createRequire, Module } from 'node:module';
import type { Agent as AgentT, EnvHttpProxyAgent as EnvHttpProxyAgentT, Dispatcher } from 'undici';

// undici's index loads all of undici (fetch, WebSocket, cache stores, mocks: 110 files, ~70 ms of
// every CLI start on a quiet machine). We need two dispatchers and the request API, so load just
// those and attach the API to Dispatcher.prototype the way undici's index does (the same modules
// from the require cache: loading the full undici elsewhere, e.g. MockAgent in tests, is the same).
const require = createRequire(import.meta.url);
deferHttp2();
const DispatcherBase = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
Object.assign(DispatcherBase.prototype, require('undici/lib/api') as object);
const Agent = require('undici/lib/dispatcher/agent') as typeof AgentT;

/**
 * undici's Client requires its HTTP/2 side (client-h2.js) at load, and that requires node:http2
 * and node:tls: ~8 ms of every CLI start, for a protocol our agents never speak (undici offers h2
 * only with `allowH2`, which nothing here sets; https:// nodes load node:tls when they connect).
 * So, before the Client loads, client-h2.js's place in the require cache holds a stand-in that
 * requires the real module the first time undici calls it (a dispatcher someone built with
 * `allowH2`) and passes every call on. When something loaded the real module first (undici's
 * index: a test's MockAgent), that one stays. test/cli/startup-cost.test.ts checks both.
 */
function deferHttp2(): void {
  const path = require.resolve('undici/lib/dispatcher/client-h2.js');
  if (require.cache[path]) return;
  let real: ((...args: unknown[]) => unknown) | undefined;
  const standIn = new Module(path);
  standIn.filename = path;
  standIn.loaded = true;
  standIn.exports = function connectH2(this: unknown, ...args: unknown[]): unknown {
    if (!real) {
      delete require.cache[path];
      real = require(path) as (...a: unknown[]) => unknown;
    }
    return real.apply(this, args);
  };
  require.cache[path] = standIn;
}

/** TLS material for https:// nodes, already loaded (PEM text). */
export interface TlsOptions {
  /** CA certificates that sign the nodes' certificates (replaces the system CAs for these connections). */
  ca?: string | Buffer;
  /** Client certificate and key for mutual TLS. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** false = do not verify the node certificate (`--insecure`). Default true. */
  rejectUnauthorized?: boolean;
}

/** Proxy settings, normally read from HTTP_PROXY / HTTPS_PROXY / NO_PROXY (and their lower-case forms). */
export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

export interface AgentOptions {
  /** TCP (and TLS) connect timeout. */
  connectTimeoutMs?: number;
  /** Sockets kept per node; several batches in flight need several. */
  connectionsPerNode?: number;
  tls?: TlsOptions;
  /** Send requests through these proxies (see `proxyFromEnv`); absent = connect directly. */
  proxy?: ProxySettings;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  // curl and undici give the lower-case form precedence; so do we.
  const v = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** The proxy settings in `env`, or undefined when none of HTTP_PROXY, HTTPS_PROXY, NO_PROXY is set. */
export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxySettings | undefined {
  const httpProxy = envValue(env, 'HTTP_PROXY');
  const httpsProxy = envValue(env, 'HTTPS_PROXY');
  const noProxy = envValue(env, 'NO_PROXY');
  if (httpProxy === undefined && httpsProxy === undefined && noProxy === undefined) return undefined;
  return { ...(httpProxy ? { httpProxy } : {}), ...(httpsProxy ? { httpsProxy } : {}), ...(noProxy ? { noProxy } : {}) };
}

/**
 * The one dispatcher of a run. The caller owns it and closes it in `finally`.
 * With proxy settings it is an undici EnvHttpProxyAgent: nodes matching NO_PROXY are reached
 * directly (with `connect` TLS options), the others through a CONNECT tunnel whose TLS to the
 * node uses `requestTls` (undici ignores `connect` for tunnelled connections, so both are set).
 */
export function createAgent(opts: AgentOptions = {}): Dispatcher {
  const timeout = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const tls = opts.tls ?? {};
  const connect = { timeout, ...tls };
  const common = { connections: opts.connectionsPerNode ?? 16, keepAliveTimeout: 10_000 };
  if (opts.proxy) {
    // Loaded only with proxy settings: the proxy agents (HTTP and SOCKS) are five more modules.
    const EnvHttpProxyAgent = require('undici/lib/dispatcher/env-http-proxy-agent') as typeof EnvHttpProxyAgentT;
    return new EnvHttpProxyAgent({
      ...common,
      connect,
      requestTls: connect,
      proxyTls: { timeout },
      // Empty strings stop undici from reading process.env behind our back: the settings given are the settings used.
      httpProxy: opts.proxy.httpProxy ?? '',
      httpsProxy: opts.proxy.httpsProxy ?? '',
      noProxy: opts.proxy.noProxy ?? '',
    });
  }
  return new Agent({ ...common, connect });
}
