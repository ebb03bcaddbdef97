import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * What the proxy does to one connection.
 * - pass: forward both ways.
 * - delay: wait `ms` before forwarding each chunk, both directions.
 * - reset: RST the client connection at once, or after `afterBytes` bytes of the response.
 * - half-open: accept and read, never connect upstream, never answer.
 * - trickle: forward the request; forward the response one byte every `intervalMs`.
 * - blackhole: forward `afterBytes` bytes of the response, then drop everything (connection stays open).
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset'; afterBytes?: number }
  | { kind: 'half-open' }
  | { kind: 'trickle'; intervalMs: number }
  | { kind: 'blackhole'; afterBytes: number };

export interface FaultProxy {
  url: string;
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** The mode for connections with no queued mode. */
  setMode(mode: FaultMode): void;
  /** Modes for the next connections, one each, in order; then the default mode again. */
  queue(...modes: FaultMode[]): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of `target` (host:port or http://host:port) that injects faults per connection. */
export async function startFaultProxy(target: string, mode: FaultMode = { kind: 'pass' }): Promise<FaultProxy> {
  const t = new URL(target.includes('://') ? target : `tcp://${target}`);
  const upstreamHost = t.hostname;
  const upstreamPort = Number(t.port);
  let defaultMode = mode;
  const queued: FaultMode[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const track = (s: Socket): Socket => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    return s;
  };

  const server: Server = createServer((client) => {
    connections += 1;
    track(client);
    const m = queued.shift() ?? defaultMode;
    if (m.kind === 'reset' && !m.afterBytes) {
      client.resetAndDestroy();
      return;
    }
    if (m.kind === 'half-open') {
      client.resume(); // read and discard; never answer
      return;
    }
    const upstream = track(connect(upstreamPort, upstreamHost));
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());

    // request direction
    if (m.kind === 'delay') {
      client.on('data', (chunk: Buffer) => later(m.ms, () => upstream.write(chunk)));
    } else {
      client.on('data', (chunk: Buffer) => upstream.write(chunk));
    }
    client.on('end', () => upstream.end());

    // response direction
    let sent = 0;
    if (m.kind === 'pass') {
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      upstream.on('end', () => client.end());
    } else if (m.kind === 'delay') {
      upstream.on('data', (chunk: Buffer) => later(m.ms, () => client.write(chunk)));
      upstream.on('end', () => later(m.ms, () => client.end()));
    } else if (m.kind === 'reset' || m.kind === 'blackhole') {
      const limit = m.afterBytes ?? 0;
      upstream.on('data', (chunk: Buffer) => {
        if (sent >= limit) return;
        const part = chunk.subarray(0, limit - sent);
        sent += part.length;
        client.write(part);
        if (sent >= limit && m.kind === 'reset') {
          // let the partial bytes leave before the RST
          client.once('drain', () => client.resetAndDestroy());
          if (client.writableLength === 0) client.resetAndDestroy();
        }
      });
    } else if (m.kind === 'trickle') {
      const pending: number[] = [];
      let ended = false;
      let pumping = false;
      const pump = (): void => {
        if (client.destroyed) return;
        const byte = pending.shift();
        if (byte === undefined) {
          pumping = false;
          if (ended) client.end();
          return;
        }
        client.write(Buffer.of(byte));
        later(m.intervalMs, pump);
      };
      upstream.on('data', (chunk: Buffer) => {
        for (const b of chunk) pending.push(b);
        if (!pumping) {
          pumping = true;
          pump();
        }
      });
      upstream.on('end', () => {
        ended = true;
        if (!pumping) client.end();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return connections;
    },
    setMode(mode) {
      defaultMode = mode;
    },
    queue(...modes) {
      queued.push(...modes);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
