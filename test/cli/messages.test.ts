/**
 * Messages an operator acts on at 3 a.m.: a seed that refuses our token says so (not "is it
 * running?"), a seed whose ring cannot be read exits 2 (nothing was sent), and an age of 0 is
 * called zero, not "add a unit: 0d".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAge } from '../../src/retention/age.js';
import { runCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

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
    expect(ok.stderr).not.toMatch(/401/);
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
