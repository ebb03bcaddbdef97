/** Ports for a local cluster: checked free before anything starts, or picked free for a ring. */
import { createServer } from 'node:net';
import { ClusterError } from './state.js';

/** True if nothing listens on host:port (we could bind it). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolveFree(true)));
  });
}

/** Checks every port before anything starts; throws naming the busy ones. */
export async function assertPortsFree(host: string, ports: readonly number[]): Promise<void> {
  const busy: number[] = [];
  for (const port of ports) if (!(await isPortFree(host, port))) busy.push(port);
  if (busy.length > 0) {
    const list = busy.join(', ');
    throw new ClusterError(
      'port_in_use',
      `port${busy.length > 1 ? 's' : ''} ${list} on ${host} ${busy.length > 1 ? 'are' : 'is'} already in use; no node was started`,
      `stop what listens there (e.g. \`lsof -i :${busy[0]}\`), or pick other ports with --base-port, or --base-port 0 for free ones`,
    );
  }
}

/**
 * Free ports for `count` nodes, all held at once while picked (so none is handed out twice) and
 * released together: a ring's topology must name each node's port before the node starts.
 */
export async function reservePorts(host: string, count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolveServer, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ host, port: 0, exclusive: true }, () => resolveServer(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

/** The address other nodes and clients use for a node listening on `host` (a wildcard is reached on loopback). */
export function reachableAddress(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host.replace(/^\[(.*)\]$/, '$1');
}
