import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

// `tsnode status` cannot be turned into a flood or a hang by its own flags.
const stubs: StubNode[] = [];
afterAll(async () => Promise.all(stubs.map((s) => s.close())));

describe('tsnode status: bounded by its inputs', () => {
  it('--watch 30d is a usage error (it used to poll in a busy loop: a timer that long fires at once)', async () => {
    const node = await startStubNode();
    stubs.push(node);
    const started = Date.now();
    const r = await runCli(['status', '--nodes', node.url, '--watch', '30d'], { timeoutMs: 10_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--watch: "30d" is outside 100ms..1h');
    expect(node.requests).toHaveLength(0);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('--watch polls each node once per interval, also while the node answers errors', async () => {
    let polls = 0;
    const node = await startStubNode({
      answer: (req, res) => {
        if (req.url !== '/sweep_delete') return false;
        polls++;
        // The first answer says "running"; every later poll fails (a 500 is a poll error, tolerated until --lost-after).
        if (polls === 1) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ nnt: { running: 'true', current_uuid: 'u' }, text: { running: 'false' }, histogram: { running: 'false' } }));
        } else {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":"busy","code":"internal"}');
        }
        return true;
      },
    });
    stubs.push(node);
    const r = await runCli(['status', '--nodes', node.url, '--watch', '200ms', '--lost-after', '1500ms', '--retries', '0']);
    expect(r.code).toBe(1);
    // It answered (500s) all along: lost, not "unreachable", and not "no answer" either.
    expect(r.stdout).toMatch(/│ lost +│ - +│ - +│ - +│ - +│ no usable status for \d+s: the node answered HTTP 500: busy/);
    // ~1.5 s at one poll per 200 ms: about 8 polls, never hundreds.
    expect(polls).toBeGreaterThanOrEqual(4);
    expect(polls).toBeLessThanOrEqual(12);
  });

  it('--nodes /dev/zero fails at once with a clear error instead of hanging or aborting', async () => {
    const r = await runCli(['status', '--nodes', '/dev/zero'], { timeoutMs: 10_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--nodes: /dev/zero is larger than 1 MiB: not a node list');
    expect(r.signal).toBeNull();
  });
});
