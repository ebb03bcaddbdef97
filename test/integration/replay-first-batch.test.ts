import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { writeRecords } from '../../src/replay/index.js';

// The node has nothing to do until the first batch reaches it: a write must put each batch on the
// wire as it is built, not once the read-ahead fills the window (bench/write.bench.mjs: the node
// sat idle while the client built five batches, ~40 ms of every run). A recording node in this
// process sees a request only when the client's loop gives the event loop a turn, which is what is
// checked; a real node in its own process would make this a race.
const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
let dir: string;
let server: Server;
const dispatcher = new Agent();
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-first-batch-'));
});
afterAll(async () => {
  await dispatcher.close();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

it('puts the first batch on the wire before the fifth is built', async () => {
  // Ten batches of 100 records, each followed by an invalid line: the rejects counted when the
  // first request arrives say how many batches the client had built by then.
  const lines: string[] = [];
  for (let b = 0; b < 10; b++) {
    for (let i = 0; i < 100; i++) lines.push(JSON.stringify({ metric: 'm', id: ID, offset: 60 * (b * 100 + i), count: 1, value: i }));
    lines.push('{"not a record"');
  }
  const input = join(dir, 'in.ndjson');
  writeFileSync(input, lines.join('\n') + '\n');
  let rejected = 0;
  let rejectedAtFirst: number | undefined;
  server = createServer((req, res) => {
    rejectedAtFirst ??= rejected;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const r = await writeRecords([input], {
    clients: [new NodeClient(url, { dispatcher })],
    rejectsPath: join(dir, 'rejects.ndjson'),
    batchSize: 100,
    concurrency: 4,
    onEvent: (e) => {
      if (e.type === 'rejected') rejected++;
    },
  });
  expect(r).toMatchObject({ stopped: 'done', read: 1010, written: 1000, rejected: 10 });
  // Now 2: the request goes out in the turn after batch 1 is sent, and this process's server reads
  // it in the next. Before, 4: four batches sent and a fifth built before the loop first waited.
  expect(rejectedAtFirst).toBeLessThan(4);
});
