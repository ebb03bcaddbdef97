/**
 * Messages an operator acts on at 3 a.m.: a seed that refuses our token says so (not "is it
 * running?"), a seed whose ring cannot be read exits 2 (nothing was sent), and an age of 0 is
 * called zero, not "add a unit: 0d".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAge } from '../../src/retention/age.js';
import { parsePolicyFile } from '../../src/retention/policy-file.js';
import { parseRules } from '../../src/retention/policy.js';
import { runCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startStubNode } from '../helpers/stub-node.js';

describe('a seed that cannot be read', () => {
  let locked: TestNode;
  beforeAll(async () => {
    locked = await startNode({ memory: true, args: ['--require-header', 'Authorization: Bearer right-token'] });
  });
  afterAll(stopAllNodes);

  it('refusing our token (401): exit 2, a hint about the token and headers', async () => {
    for (const extra of [[], ['--header', 'Authorization: Bearer wrong-token']]) {
      const r = await runCli(['nodes', '--seed', locked.url, '--retries', '0', ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/cannot read the ring from this --seed: .*HTTP 401.*\(nothing was sent\)/);
      expect(r.stderr).toMatch(/hint: the node refused the request \(HTTP 401\): check the token and headers sent/);
      expect(r.stderr).not.toMatch(/is the seed a running node/);
      expect(r.stderr).not.toContain('right-token');
    }
    // With the right token the node answers (this lone node has no ring: that is what it says then).
    const ok = await runCli(['nodes', '--seed', locked.url, '--header', 'Authorization: Bearer right-token']);
    expect(ok.stderr).not.toMatch(/HTTP 401/); // not /401/: a random node id may hold those digits
  });

  it('unreachable: exit 2, nothing was sent', async () => {
    const r = await runCli(['sweep', '--seed', await deadAddress(), '--before', '30d', '--yes', '--retries', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read the ring from this --seed: .*\(nothing was sent\)/);
  });
});

describe('the age 0', () => {
  it('is zero, with no "0d" suggestion', () => {
    for (const t of ['0', '0.0', '00']) {
      const r = checkAge(t);
      expect(r.ok).toBe(false);
      expect(JSON.stringify(r)).toMatch(/is zero/);
      expect(JSON.stringify(r)).not.toMatch(/0d/);
    }
    expect(JSON.stringify(checkAge('7'))).toMatch(/7d for days/);
  });
});

describe('hostile policies', () => {
  const messageOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      return `${(err as Error).message} ${(err as { hint?: string }).hint ?? ''}`;
    }
    return 'no error';
  };

  it('a 5,000-character --rule is not echoed whole, whichever part is long', () => {
    const x = 'x'.repeat(5000);
    for (const rule of [`nnt:60=${x}`, `${x}=30d`, `nnt:${x}=30d`, `nnt:60${x}`, `nnt=${x}`]) {
      const m = messageOf(() => parseRules([rule]));
      expect(m).not.toBe('no error');
      expect(m.length).toBeLessThan(600);
      expect(m).toMatch(/5000|5007|5004|5006|5003|characters/);
    }
  });

  it('a deeply nested policy gives a clear error, not "Maximum call stack size exceeded"', () => {
    const yaml = `nnt: ${'['.repeat(20000)}${']'.repeat(20000)}\n`;
    const json = `{"nnt": ${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}}`;
    const block = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    for (const [text, file] of [
      [yaml, 'p.yaml'],
      [json, 'p.json'],
      [block, 'b.yaml'],
    ] as const) {
      const m = messageOf(() => parsePolicyFile(text, file));
      expect(m).not.toMatch(/call stack/);
      expect(m).toMatch(/nested|not|expected/);
    }
    expect(messageOf(() => parsePolicyFile(yaml, 'p.yaml'))).toMatch(/p\.yaml:1:22: nested more than 16 levels deep/);
  });
});

describe('a node without the sweep API', () => {
  it('is "no sweep API" at the preflight of sweep (with a hint about the store version) and node_managed in retention apply', async () => {
    // A store of 0.19.23 or later: /sweep_delete is no endpoint there.
    const stub = await startStubNode({
      answer: (req, res) => {
        if (!req.url?.startsWith('/sweep_delete')) return false;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return true;
      },
    });
    try {
      const env = { env: { XDG_STATE_HOME: '/tmp/tsnode-messages-state' } };
      const sweep = await runCli(['sweep', '--before', '2020-01-01T00:00:00Z', '--nodes', stub.url, '--yes', '--retries', '0'], env);
      expect(sweep.code).toBe(2);
      expect(sweep.stderr).toMatch(new RegExp(`${stub.url} has no sweep API: GET /sweep_delete answered 404`));
      expect(sweep.stderr).not.toMatch(/is unreachable|: unreachable/);
      expect(sweep.stderr).toMatch(/a store with \/sweep_delete \(versions 0\.11\.6 to 0\.19\.22, or a tsnode reference node; 0\.19\.23 removed it\)/);
      expect(sweep.stderr).toMatch(/tsnode retention verify to check what it keeps/);
      // sweep cancel: the node's state is "no sweep API" too, not "failed", with the same hint
      const cancel = await runCli(['sweep', 'cancel', '--nodes', stub.url, '--yes', '--retries', '0'], env);
      expect(cancel.code).toBe(1);
      expect(cancel.stdout).toMatch(new RegExp(`${stub.url}\\s+│ no sweep API │`));
      expect(cancel.stdout).not.toMatch(/failed/);
      expect(cancel.stderr).toMatch(/hint: for a node with no sweep API, use a store with \/sweep_delete/);
      // retention apply sends such a node nothing and verifies it instead; this stub lists no
      // inventories, so the verdict cannot be reached: exit 3, never "done".
      const apply = await runCli(['retention', 'apply', '--rule', 'text=30d', '--nodes', stub.url, '--yes', '--retries', '0'], env);
      expect(apply.code).toBe(3);
      expect(apply.stderr).toMatch(new RegExp(`${stub.url}: no sweep API, its retention is its own config: node_managed`));
      expect(apply.stderr).toMatch(/cannot_verify/);
      expect(apply.stderr).not.toMatch(/is unreachable|: unreachable/);
    } finally {
      await stub.close();
    }
  });
});
