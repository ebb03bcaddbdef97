/**
 * The reference node: `startServer(config)` opens the store, starts the HTTP server and returns
 * its address and a `close()` that stops accepting, lets in-flight requests finish, stops the
 * sweeper and closes the database. Usable in-process (tests, scripts) and by `tsnode serve`.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ProtocolError } from '../protocol/index.js';
import { serverConfig, type ServerConfig } from './config.js';
import { methodNotAllowed, notFound, parseTarget, sendError, type RequestTarget } from './http.js';
import { IdentityError, StartError } from './errors.js';
import { settleIdentity, type NodeIdentity } from './identity.js';
import { capaJson, gossipJson, locateJson, locateXml, nodeState, nodeStats, topoRingJson, topologyJson, topologyXml } from './routes/cluster.js';
import type { Handler, NodeContext } from './routes/context.js';
import { readHistogram, readText } from './routes/read.js';
import { replicationJson, replicationPause, replicationResume } from './routes/replication.js';
import { rollupRead } from './routes/rollup.js';
import { startReplication } from './replication/start.js';
import { LateData } from './replication/late-data.js';
import { proxied } from './replication/proxy.js';
import { listHistogramRawShards, listHistogramShards, listNntbsShards, listRawShards } from './routes/shards.js';
import { sweepCancel, sweepDelete, sweepStatus } from './routes/sweep.js';
import { findTags, fullCanonicalDelete, fullTagsDelete, typedTagsDelete } from './routes/tags.js';
import { writeHistogram, writeNnt, writeText } from './routes/write.js';
import { SqliteStore, type FlushEvent } from './sqlite-store.js';
import { shardLayout } from './shards.js';
import { describeRemoved, RetentionKeeper } from './retention-keeper.js';
import { Sweeper } from './sweeper.js';

// 'tsnode/server' names the node's start error beside startServer.
export { StartError, type StartErrorCode } from './errors.js';

export interface RunningNode {
  /** `http://host:port` (IPv6 hosts in brackets). */
  url: string;
  host: string;
  port: number;
  /** The validated config the node runs with. */
  config: ServerConfig;
  /** Stops accepting, finishes in-flight requests, stops the sweeper, closes the store. Idempotent. */
  close(): Promise<void>;
  /** The node's parts, for in-process tests (e.g. waiting for a sweep to settle). */
  node: NodeContext;
  /** Its identity and ring (also in `node`), for the ready line. */
  identity: NodeIdentity;
  /** Node-managed retention (`--retention`), or null; tests call its check() with an injected clock. */
  retention: RetentionKeeper | null;
}

/** How often node-managed retention is checked by default (the store's own cadence is its business; a minute is ours). */
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;

type Methods = Partial<Record<string, Handler>>;

/** Finds the handlers for a path (by its raw segments); undefined when no endpoint has that shape. */
export function routeFor(segments: readonly string[]): { methods: Methods; name: string } | undefined {
  const [a, b] = segments;
  const n = segments.length;
  if (a === 'sweep_delete') {
    if (n === 1) return { name: '/sweep_delete', methods: { GET: sweepStatus, DELETE: sweepDelete } };
    if (n === 2 && b === 'cancel') return { name: '/sweep_delete/cancel', methods: { GET: sweepCancel } };
    return undefined;
  }
  const tags = tagRouteFor(segments);
  if (tags) return tags;
  if (a === 'write' && n === 2 && b === 'nnt') return { name: '/write/nnt', methods: { PUT: writeNnt, POST: writeNnt } };
  if (a === 'write' && n === 2 && b === 'text') return { name: '/write/text', methods: { PUT: writeText, POST: writeText } };
  if (a === 'histogram' && n === 2 && b === 'write') return { name: '/histogram/write', methods: { PUT: writeHistogram, POST: writeHistogram } };
  if (a === 'rollup' && n >= 3) return { name: '/rollup/<uuid>/<metric>', methods: { GET: proxiedRollup } };
  if (a === 'read' && n >= 5) return { name: '/read/<start>/<end>/<uuid>/<metric>', methods: { GET: proxiedText } };
  if (a === 'histogram' && n >= 6) return { name: '/histogram/<start>/<end>/<period>/<uuid>/<metric>', methods: { GET: proxiedHistogram } };
  if (a === 'replication') return replicationRouteFor(segments);
  return shardRouteFor(segments) ?? clusterRouteFor(segments);
}

/** The shard inventories (routes/shards.ts). */
function shardRouteFor(segments: readonly string[]): { methods: Methods; name: string } | undefined {
  const [a, b, c] = segments;
  const n = segments.length;
  if (a === 'list_nntbs_shards' && n === 1) return { name: '/list_nntbs_shards', methods: { GET: listNntbsShards } };
  if (a === 'raw' && n === 2 && b === 'list_shards') return { name: '/raw/list_shards', methods: { GET: listRawShards } };
  if (a === 'histogram_raw' && n === 2 && b === 'list_shards') return { name: '/histogram_raw/list_shards', methods: { GET: listHistogramRawShards } };
  if (a === 'histogram' && n === 3 && c === 'list_shards') return { name: '/histogram/<period>/list_shards', methods: { GET: listHistogramShards } };
  return undefined;
}

const TYPED_TAG_DELETES = { nnt: typedTagsDelete('nnt'), text: typedTagsDelete('text'), histogram: typedTagsDelete('histogram') } as const;

/** The tag-query endpoints (routes/tags.ts). */
function tagRouteFor(segments: readonly string[]): { methods: Methods; name: string } | undefined {
  const [a, b, c] = segments;
  const n = segments.length;
  if (a === 'find' && ((n === 2 && b === 'tags') || (n === 3 && c === 'tags'))) return { name: n === 2 ? '/find/tags' : '/find/<account>/tags', methods: { GET: findTags } };
  if (a === 'full' && n === 2 && b === 'tags') return { name: '/full/tags', methods: { DELETE: fullTagsDelete } };
  if (a === 'full' && n >= 4 && b === 'canonical') return { name: '/full/canonical/<uuid>/<metric>', methods: { DELETE: fullCanonicalDelete } };
  if ((a === 'nnt' || a === 'text' || a === 'histogram') && n === 2 && b === 'tags') return { name: `/${a}/tags`, methods: { DELETE: TYPED_TAG_DELETES[a] } };
  return undefined;
}

// Reads at a ring node that does not own the metric are answered by an owner (replication/proxy.ts).
const proxiedRollup = proxied(rollupRead, 1);
const proxiedText = proxied(readText, 3);
const proxiedHistogram = proxied(readHistogram, 4);

/** tsnode's own replication endpoints (routes/replication.ts). */
function replicationRouteFor(segments: readonly string[]): { methods: Methods; name: string } | undefined {
  const [, b] = segments;
  if (segments.length === 2 && b === 'json') return { name: '/replication/json', methods: { GET: replicationJson } };
  if (segments.length === 3 && b === 'pause') return { name: '/replication/pause/<peer>', methods: { POST: replicationPause, PUT: replicationPause } };
  if (segments.length === 3 && b === 'resume') return { name: '/replication/resume/<peer>', methods: { POST: replicationResume, PUT: replicationResume } };
  return undefined;
}

/** The ring's endpoints (routes/cluster.ts); without a hash, /topology/* answers the current topology, as older clients ask. */
function clusterRouteFor(segments: readonly string[]): { methods: Methods; name: string } | undefined {
  const [a, b] = segments;
  const n = segments.length;
  if (a === 'state' && n === 1) return { name: '/state', methods: { GET: nodeState } };
  if (a === 'stats.json' && n === 1) return { name: '/stats.json', methods: { GET: nodeStats } };
  if (a === 'topology' && (n === 2 || n === 3) && b === 'json') return { name: '/topology/json/<hash>', methods: { GET: topologyJson } };
  if (a === 'topology' && (n === 2 || n === 3) && b === 'xml') return { name: '/topology/xml/<hash>', methods: { GET: topologyXml } };
  if (a === 'gossip' && n === 2 && b === 'json') return { name: '/gossip/json', methods: { GET: gossipJson } };
  if (a === 'locate' && n >= 4 && b === 'json') return { name: '/locate/json/<uuid>/<metric>', methods: { GET: locateJson } };
  if (a === 'locate' && n >= 4 && b === 'xml') return { name: '/locate/xml/<uuid>/<metric>', methods: { GET: locateXml } };
  if (a === 'toporing' && (n === 2 || n === 3) && b === 'json') return { name: '/toporing/json/<hash>', methods: { GET: topoRingJson } };
  if (a === 'capa.json' && n === 1) return { name: '/capa.json', methods: { GET: capaJson } };
  return undefined;
}

function validateConfig(config: ServerConfig): ServerConfig {
  const sortUnique = (xs: readonly number[], what: string): number[] => {
    const out = [...new Set(xs)].sort((x, y) => x - y);
    if (out.length === 0 || out.some((x) => !Number.isSafeInteger(x) || x <= 0)) throw new StartError('bad_config', `${what} must be positive whole seconds`);
    return out;
  };
  const rollups = sortUnique(config.rollups, 'rollups');
  if (rollups.some((r) => r % rollups[0]! !== 0)) throw new StartError('bad_config', `every rollup period must be a multiple of the smallest (${rollups[0]})`);
  return { ...config, rollups, histogramRollups: sortUnique(config.histogramRollups, 'histogram rollups') };
}

export interface NodeHooks {
  /** An unexpected failure inside the node (default: a process warning). */
  onInternalError?: (err: unknown) => void;
  /** What the operator should know: a torn log tail dropped, a full disk, a backlog being applied. */
  onNotice?: (message: string) => void;
  /** Each flush's start and end (`tsnode serve --trace-flush`, tests). */
  onFlush?: (e: FlushEvent) => void;
}

export async function startServer(input: Partial<ServerConfig> = {}, hooks: NodeHooks = {}): Promise<RunningNode> {
  const config = validateConfig(serverConfig(input));
  const onInternal = hooks.onInternalError ?? ((err: unknown) => process.emitWarning(`tsnode node: ${(err as Error)?.stack ?? String(err)}`));
  const onNotice = hooks.onNotice ?? ((message: string) => process.emitWarning(`tsnode node: ${message}`));
  const { node, replication } = await openNode(config, hooks, onInternal, onNotice);
  const { store, sweeper } = node;
  const life = { closing: false };
  // HTTPS when given a certificate (--tls-cert/--tls-key): the same routes and limits either way.
  const server: Server = httpServer(config, requestQueue(requestHandler(node, onInternal, life, () => server)));
  try {
    await listen(server, config);
  } catch (err) {
    await replication?.close();
    await store.close();
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.address;
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      life.closing = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // In-flight requests get a grace period; then whatever is left is cut off.
      const force = setTimeout(() => server.closeAllConnections(), 10_000);
      force.unref();
      await done;
      clearTimeout(force);
      await replication?.close();
      retention?.stop();
      await sweeper.stop();
      await store.close();
    })();
    return closed;
  };
  // Checked now and every interval from here on: the node listens, so what it removes is seen.
  const retention = config.retention
    ? new RetentionKeeper(store, config.retention, {
        now: config.now,
        intervalMs: config.retentionIntervalMs ?? DEFAULT_RETENTION_INTERVAL_MS,
        onRemoved: (r) => onNotice(describeRemoved(r)),
        onError: onInternal,
      })
    : null;
  retention?.start();
  replication?.replication.start();
  return { url, host, port: address.port, config, close, node, identity: node.identity, retention };
}

/** The node's parts: the store (holding the data dir's lock), its identity, the sweeper and replication; the store closed again when a later part fails. */
async function openNode(
  config: ServerConfig,
  hooks: NodeHooks,
  onInternal: (err: unknown) => void,
  onNotice: (message: string) => void,
): Promise<{ node: NodeContext; replication: Awaited<ReturnType<typeof startReplication>> }> {
  const store = new SqliteStore({
    dataDir: config.dataDir,
    rollups: config.rollups,
    histogramRollups: config.histogramRollups,
    shards: shardLayout(config.rollups, config.histogramRollups, config.shards ?? {}),
    onError: onInternal,
    onNotice,
    onFlush: hooks.onFlush,
    salvageLog: config.salvageLog,
    reserveBytes: config.diskReserveBytes,
    ...(config.cacheBytes !== undefined ? { cacheBytes: config.cacheBytes } : {}),
    flushRecords: config.flushRecords,
    flushPauseMs: config.flushPauseMs,
  });
  // Settled once the store holds the data dir's lock, so two nodes never both write an identity.
  let identity: NodeIdentity;
  try {
    identity = settleIdentity({
      nodeId: config.nodeId ?? null,
      dataDir: config.dataDir,
      topology: config.topology ?? null,
      ...(config.topologySource ? { topologySource: config.topologySource } : {}),
    });
  } catch (err) {
    await store.close();
    if (err instanceof IdentityError) throw new StartError(err.code, err.message);
    throw err;
  }
  const sweeper = new Sweeper(store, { paceMs: config.sweepPaceMs, onError: onInternal });
  let replication: Awaited<ReturnType<typeof startReplication>>;
  try {
    replication = startReplication(config, identity, onNotice);
  } catch (err) {
    await store.close();
    throw new StartError('bad_journal', `cannot open the replication journals: ${err instanceof Error ? err.message : String(err)}`);
  }
  const node: NodeContext = { config, store, sweeper, identity, replication: replication?.replication ?? null, late: new LateData() };
  return { node, replication };
}

/** One request: its route and handler, or an error as JSON (the body, if any, drained, not buffered). */
function requestHandler(
  node: NodeContext,
  onInternal: (err: unknown) => void,
  life: { closing: boolean },
  server: () => Server,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { config } = node;
  return async (req, res) => {
    let target: RequestTarget | undefined;
    try {
      if (config.requireHeaders?.length) requireHeaders(req, config.requireHeaders);
      target = parseTarget(req.url ?? '/');
      const route = routeFor(target.segments);
      const path = (req.url ?? '/').split('?')[0]!;
      // A node of the store's later versions has no sweep API: /sweep_delete is no endpoint there.
      if (!route || (config.noSweepApi === true && target.segments[0] === 'sweep_delete')) throw notFound(path, { sweepApi: config.noSweepApi !== true });
      const method = req.method ?? 'GET';
      const handler = route.methods[method];
      if (!handler) throw methodNotAllowed(method, route.name, Object.keys(route.methods));
      await handler(req, res, target, node);
    } catch (err) {
      // Whatever happened, the client gets JSON; the body (if any) is drained, not buffered.
      if (!req.complete) req.resume();
      sendError(res, err, onInternal);
    } finally {
      if (life.closing) res.once('finish', () => server().closeIdleConnections());
    }
  };
}

/**
 * Requests pipelined on one connection run one after the other: a GET sent right behind a POST
 * must see what the POST stored (node:http hands both over before the POST's body is in).
 */
function requestQueue(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => void {
  const inFlight = new WeakMap<object, Promise<void>>();
  return (req, res) => {
    const socket = req.socket;
    const before = inFlight.get(socket);
    const run = before === undefined ? handle(req, res) : before.then(() => handle(req, res));
    const settled: Promise<void> = run.finally(() => {
      if (inFlight.get(socket) === settled) inFlight.delete(socket);
    });
    inFlight.set(socket, settled);
  };
}

/** The HTTP (or HTTPS) server with the node's timeouts, answering a malformed request with JSON before closing it. */
function httpServer(config: ServerConfig, onRequest: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const serverOptions = {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: 5_000,
    // How often the timeouts above are checked (Node's default is every 30 s, which lets a slow client linger).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
  };
  const server: Server = config.tls ? createHttpsServer({ ...serverOptions, cert: config.tls.cert, key: config.tls.key }, onRequest) : createServer(serverOptions, onRequest);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const body = JSON.stringify(
      timeout
        ? { error: 'the request took too long to arrive; the node cut it off', code: 'request_timeout' }
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? { error: 'request headers are too large', code: 'bad_request' }
          : { error: 'malformed HTTP request', code: 'bad_request' },
    );
    const status = timeout ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    socket.end(
      `HTTP/1.1 ${status} ${timeout ? 'Request Timeout' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

/** Listens on the configured host and port; a port in use, a port denied or no such address is a StartError. */
async function listen(server: Server, config: ServerConfig): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(err);
      server.once('error', onError);
      server.listen(config.port, config.host, () => {
        server.off('error', onError);
        resolve();
      });
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw new StartError('port_in_use', `port ${config.port} on ${config.host} is already in use (is another node running?); pick another --port, or 0 for any free port`);
    if (e.code === 'EACCES') throw new StartError('port_denied', `not allowed to listen on ${config.host}:${config.port} (ports below 1024 need privileges); pick another --port`);
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') throw new StartError('bad_host', `cannot listen on ${config.host}: no such local address`);
    throw err;
  }
}

/** 401 unless the request carries every required header with exactly its value (compared in constant time). */
function requireHeaders(req: IncomingMessage, required: ReadonlyArray<{ name: string; value: string }>): void {
  for (const { name, value } of required) {
    const got = req.headers[name];
    const given = Buffer.from(typeof got === 'string' ? got : '');
    const wanted = Buffer.from(value);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      throw new ProtocolError(401, 'unauthorized', `this node requires the ${name} header${got === undefined ? '' : ' with another value'}`, { header: name });
    }
  }
}
