// The ring's costs: compiling a topology, placing metrics, and what discovery plus a coverage
// check add before a sweep of a 100-node ring (target: under 100 ms). The 100 nodes are reference
// nodes in this process (in memory), so their answers share the client's event loop: a pessimistic
// setting compared with nodes on other machines.
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { Ring, topologyHash, discoverRing, NodeClient, fanOut } from '../dist/index.js';
import { probeNode } from '../dist/client/discovery.js';
import { checkCoverage } from '../dist/client/coverage.js';
import { startServer } from '../dist/server/server.js';

const NODES = Number(process.env.NODES ?? 100);
const WEIGHT = 64;
const RUNS = Number(process.env.RUNS ?? 15);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

// Reserve the ports first: the topology names them before the nodes start. On this shared
// machine another process may take a port in between: then the whole set is picked again.
async function startRing() {
  for (let attempt = 1; ; attempt++) {
    const holders = await Promise.all(Array.from({ length: NODES }, () => startServer({ dataDir: null, port: 0 })));
    const ports = holders.map((s) => s.port);
    await Promise.all(holders.map((s) => s.close()));
    const topology = { writeCopies: 2, nodes: ports.map((port) => ({ id: randomUUID(), address: '127.0.0.1', port, apiport: port, weight: WEIGHT })) };
    const started = await Promise.allSettled(topology.nodes.map((n) => startServer({ dataDir: null, port: n.port, nodeId: n.id, topology })));
    if (started.every((r) => r.status === 'fulfilled')) return { topology, nodes: started.map((r) => r.value) };
    await Promise.all(started.filter((r) => r.status === 'fulfilled').map((r) => r.value.close()));
    if (attempt === 3) throw /** @type {PromiseRejectedResult} */ (started.find((r) => r.status === 'rejected')).reason;
  }
}
const { topology, nodes } = await startRing();

const rows = [];
{
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    Ring.compile(topology);
    samples.push(ms(t0));
  }
  rows.push([`Ring.compile (${NODES} nodes x ${WEIGHT} slots)`, median(samples), 'ms']);
}
{
  const ring = Ring.compile(topology);
  const n = 200_000;
  const uuid = randomUUID();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) ring.ownersOf(uuid, `metric.${i}`);
  rows.push(['ownersOf (write_copies 2)', Math.round(n / (ms(t0) / 1000)), 'metrics/s']);
}
const agent = new Agent({ connections: 4 });
const clients = nodes.map((n) => new NodeClient(n.url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } }));
{
  const discover = [];
  const coverage = [];
  for (let i = 0; i < RUNS; i++) {
    let t0 = process.hrtime.bigint();
    const ring = await discoverRing(clients[i % NODES]);
    discover.push(ms(t0));
    t0 = process.hrtime.bigint();
    const probes = await fanOut(clients, (c) => probeNode(c));
    const report = checkCoverage(
      probes.map((o) => (o.ok ? { url: o.node, self: o.value } : { url: o.node })),
      ring.topology,
    );
    coverage.push(ms(t0));
    if (report.verdict !== 'covered' || ring.hash !== topologyHash(topology)) throw new Error(`unexpected: ${report.verdict}`);
  }
  rows.push([`discoverRing from one seed (${NODES}-node topology)`, median(discover), 'ms']);
  rows.push([`probe ${NODES} nodes (GET /state) + checkCoverage`, median(coverage), 'ms']);
  rows.push(['discovery + coverage, total (target < 100 ms)', median(discover) + median(coverage), 'ms']);
}
await agent.close();
await Promise.all(nodes.map((n) => n.close()));

console.log(`nodes: ${NODES}, runs: ${RUNS} (medians)`);
console.log('| what | value | unit |');
console.log('|---|---:|---|');
for (const [what, value, unit] of rows) console.log(`| ${what} | ${typeof value === 'number' && value < 1000 ? value.toFixed(1) : value} | ${unit} |`);
