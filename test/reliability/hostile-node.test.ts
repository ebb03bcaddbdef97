import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeRequestError } from '../../src/client/errors.js';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli } from '../helpers/cli.js';
import { answerEndlessly, startStubNode, type StubAnswer, type StubNode } from '../helpers/stub-node.js';

// Nodes no real node would be: one that answers without end, one whose acknowledgement counts
// fewer records than it was sent, one that puts terminal escapes in every string it returns.
// Each is a small fake (test/helpers/stub-node.ts); the client and the CLI must hold up.

const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dir = mkdtempSync(join(tmpdir(), 'tsnode-hostile-'));
const stubs: StubNode[] = [];
const agents: Array<{ close(): Promise<void> }> = [];

async function stub(answer: StubAnswer): Promise<StubNode> {
  const s = await startStubNode({ answer });
  stubs.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all(stubs.splice(0).map((s) => s.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A control character a terminal would act on, anywhere in `text`. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

describe('an endless answer', () => {
  let sent: Promise<number> | undefined;
  const endless: StubAnswer = (req, res) => {
    if (!(req.url ?? '').startsWith('/sweep_delete') && !(req.url ?? '').startsWith('/rollup/')) return false;
    sent = answerEndlessly(res, `[${'1,'.repeat(32 * 1024)}`);
    return true;
  };

  it('tsnode status stops reading at the cap with code too_large at once, not when memory runs out', async () => {
    const node = await stub(endless);
    const started = Date.now();
    const r = await runCli(['status', '--nodes', node.url, '--retries', '0', '--request-timeout', '20s']);
    const ms = Date.now() - started;
    expect(r.code, r.stderr).toBe(1);
    // It answered, with too much: a bad answer, not an unreachable node.
    expect(r.stdout).toMatch(/│ bad answer │ - +│ - +│ - +│ - +│ answer too large/);
    expect(r.stdout).toContain('answer too large');
    expect(r.stdout).toContain('the limit for this request is 256 KiB');
    expect(ms).toBeLessThan(10_000);
    // The node got to send the cap plus what the sockets buffer, not gigabytes.
    expect(await sent!).toBeLessThan(32 * 1024 * 1024);
  });

  it('a rollup read is cut off at a cap sized from its range; memory stays flat', async () => {
    const node = await stub(endless);
    const dispatcher = createAgent();
    agents.push(dispatcher);
    const client = new NodeClient(node.url, { dispatcher, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
    // One day of 60 s buckets: 1,440 rows, a cap of about 1.1 MiB.
    const q = { uuid: UUID, metric: 'cpu', startMs: 1_700_000_000_000, endMs: 1_700_086_400_000, spanMs: 60_000 };
    global.gc?.();
    const before = process.memoryUsage().rss;
    let err: unknown;
    for (let i = 0; i < 20; i++) {
      err = await client.readRollup(q).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NodeRequestError);
      expect((err as NodeRequestError).code).toBe('too_large');
    }
    const grown = process.memoryUsage().rss - before;
    expect((err as NodeRequestError).message).toMatch(/answer too large: the limit for this request is 1\.1 MiB, and more arrived; stopped reading/);
    expect((err as NodeRequestError).retryable).toBe(false);
    // 20 reads of an endless body: each dropped at ~1 MiB.
    expect(grown).toBeLessThan(200 * 1024 * 1024);
    expect(await sent!).toBeLessThan(32 * 1024 * 1024);
  });

  it('an answer that announces a size over the cap is refused unread; an error answer is cut, not refused', async () => {
    const node = await stub((req, res) => {
      if (req.url === '/sweep_delete') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 * 1024 * 1024) });
        res.write('{');
        return true;
      }
      if (req.url?.startsWith('/rollup/')) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`boom ${'x'.repeat(1024 * 1024)}`);
        return true;
      }
      return false;
    });
    const dispatcher = createAgent();
    agents.push(dispatcher);
    const client = new NodeClient(node.url, { dispatcher, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
    const status = (await client.sweepStatus().catch((e: unknown) => e)) as NodeRequestError;
    expect(status.code).toBe('too_large');
    expect(status.message).toContain('it announced 1 GiB');
    const read = (await client.readRollup({ uuid: UUID, metric: 'm', startMs: 0, endMs: 60_000, spanMs: 60_000 }).catch((e: unknown) => e)) as NodeRequestError;
    expect(read.code).toBe('http');
    expect(read.message).toMatch(/HTTP 500: boom x+$/);
  });

  it('--max-answer sets one cap for every answer', async () => {
    const node = await stub(endless);
    const r = await runCli(['status', '--nodes', node.url, '--retries', '0', '--max-answer', '64KiB', '--output', 'json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).nodes[0]).toMatchObject({ ok: false, state: 'bad_answer', error: { code: 'too_large' } });
    expect(JSON.parse(r.stdout).nodes[0].error.message).toContain('the limit for this request is 64 KiB');
    const bad = await runCli(['status', '--nodes', node.url, '--max-answer', '1GiB']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-answer: "1GiB" is larger than 512MiB');
  });
});

describe('a short acknowledgement', () => {
  const records = (n: number, metric = 'cpu'): string =>
    Array.from({ length: n }, (_, i) => JSON.stringify({ metric, id: UUID, offset: 60 * i, count: 1, value: i })).join('\n') + '\n';
  /** A node that answers every write with `ack(records in the body)`. */
  const acking =
    (ack: (n: number) => string): StubAnswer =>
    (req, res, body) => {
      if (req.url !== '/write/nnt') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(ack((JSON.parse(body) as unknown[]).length));
      return true;
    };

  it('{"records":1} for a 5-record batch: resent, then not written: into the rejects file, exit 1, never counted', async () => {
    const node = await stub(acking(() => '{"records":1}'));
    const f = join(dir, 'short.ndjson');
    writeFileSync(f, records(5));
    const r = await runCli(['write', f, '--node', node.url, '--retries', '1', '--output', 'json']);
    expect(r.code, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ status: 'nodes-down', read: 5, written: 0, rejected: 5, failed_records: 5, acknowledged: { by_count: 0, bare: 0 } });
    // The first answer and one resend.
    expect(node.requests.filter((q) => q.path === '/write/nnt')).toHaveLength(2);
    const rejects = readFileSync(`${f}.rejects.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { record: number; error: string });
    expect(rejects.map((x) => x.record)).toEqual([1, 2, 3, 4, 5]);
    expect(rejects[0]!.error).toContain('acknowledged 1 of the 5 records sent (a short acknowledgement)');
  });

  it('{"records":0} is not "the whole batch", and a count larger than the batch fails it too', async () => {
    for (const [body, says] of [
      ['{"records":0}', 'acknowledged 0 of the 3 records sent'],
      ['{"records":7}', 'acknowledged 7 records for the 3 sent'],
    ] as const) {
      const node = await stub(acking(() => body));
      const f = join(dir, `ack-${body.length}-${says.length}.ndjson`);
      writeFileSync(f, records(3));
      const r = await runCli(['write', f, '--node', node.url, '--retries', '0']);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('wrote 0 in 0 batches');
      expect(r.stdout).toContain(says);
    }
  });

  it('a 2xx without a count acknowledges the whole batch, and the summary says how each was acknowledged', async () => {
    let calls = 0;
    // Alternating: the production store's empty 200, then a counted answer.
    const node = await stub(acking((n) => (calls++ % 2 === 0 ? '' : JSON.stringify({ records: n }))));
    const f = join(dir, 'bare.ndjson');
    writeFileSync(f, records(10));
    const r = await runCli(['write', f, '--node', node.url, '--batch-size', '5', '--concurrency', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('wrote 10 in 2 batches');
    expect(r.stdout).toContain("acknowledged: 5 records by the node's count, 5 by a 2xx that carried no count");
  });
});

describe('terminal escapes from a node', () => {
  // Retitle the window, clear the screen, a carriage return and a forged "all idle" table row, a
  // right-to-left override: everything a metric name or an error text could carry.
  const EVIL = '\u001b]0;pwned\u0007\u001b[2J\r│ http://db9:8112 │ nnt │ no │\u202e';
  const evil: StubAnswer = (req, res) => {
    if (req.url === '/sweep_delete') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ nnt: { running: 'false' }, text: { running: 'true', current_metric: `${UUID}-${EVIL}`, timestamp: '1700000000' }, histogram: { running: 'false' } }),
      );
      return true;
    }
    if (req.url?.startsWith('/rollup/') || req.url === '/write/nnt') {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `bad ${EVIL}`, code: 'bad_request' }));
      return true;
    }
    return false;
  };

  it('status: a metric name full of escapes is shown escaped in the table, exact in JSON', async () => {
    const node = await stub(evil);
    const table = await runCli(['status', '--nodes', node.url]);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toMatch(RAW_CONTROL);
    expect(table.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2J\\r│ http://db9:8112 │ nnt │ no │\\u202e');
    // The forged row stays inside its cell: every line of the table has the same width.
    const widths = new Set(
      table.stdout
        .trimEnd()
        .split('\n')
        .map((l) => [...l].length),
    );
    expect(widths.size).toBe(1);
    const json = await runCli(['status', '--nodes', node.url, '--output', 'json']);
    expect(JSON.parse(json.stdout).nodes[0].status.text.current_metric).toBe(`${UUID}-${EVIL}`);
  });

  it('status --watch: the progress lines escape it too', async () => {
    let polls = 0;
    const node = await stub((req, res, body) => {
      // Running for two polls, then idle.
      if (req.url === '/sweep_delete' && ++polls > 2) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } }));
        return true;
      }
      return evil(req, res, body);
    });
    const r = await runCli(['status', '--nodes', node.url, '--watch', '100ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/: running \(text .*\\x1b\]0;pwned/);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });

  it("a node's error text is escaped in log lines and in the write summary", async () => {
    const node = await stub(evil);
    const read = await runCli(['read', UUID, 'cpu', '--nodes', node.url, '--start', '1700000000', '--end', '1700003600', '--retries', '0']);
    expect(read.code).not.toBe(0);
    expect(read.stderr).toContain('bad \\x1b]0;pwned');
    expect(read.stderr + read.stdout).not.toMatch(RAW_CONTROL);
    const f = join(dir, 'evil.ndjson');
    writeFileSync(f, `${JSON.stringify({ metric: 'm', id: UUID, offset: 0, count: 1, value: 1 })}\n`);
    const w = await runCli(['write', f, '--node', node.url, '--verbose']);
    expect(w.code).toBe(1);
    expect(w.stdout + w.stderr).toContain('bad \\x1b]0;pwned');
    expect(w.stdout + w.stderr).not.toMatch(RAW_CONTROL);
    // The rejects file is data, not a terminal: the node's words are kept exactly (JSON-escaped).
    expect(JSON.parse(readFileSync(`${f}.rejects.ndjson`, 'utf8')).error).toContain(EVIL);
  });
});
