/** `tsnode cluster up --lenient-timestamps` passes the flag on to every node it starts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';
import { rawRequest } from './http.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-lenient-'));
afterAll(() => {
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

const bareRead = '/rollup/fc85e0ab-f568-45e6-86ee-d7443be8277d/online?start_ts=1529509020&end_ts=1529509200&rollup_span=60s';

describe('cluster up --lenient-timestamps', () => {
  it('starts every node lenient; without the flag every node is strict', async () => {
    for (const lenient of [true, false]) {
      const dir = join(root, lenient ? 'lenient' : 'strict');
      const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json', ...(lenient ? ['--lenient-timestamps'] : [])], {
        timeoutMs: 30_000,
      });
      try {
        expect(up.code, up.stderr).toBe(0);
        const urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
        expect(urls).toHaveLength(2);
        for (const url of urls) {
          const r = await rawRequest(url, 'GET', bareRead);
          if (lenient) {
            expect(r.status, r.text).toBe(200);
            expect(r.json).toEqual([
              [1529509020, null],
              [1529509080, null],
              [1529509140, null],
            ]);
          } else {
            expect(r.status).toBe(400);
            expect(r.json.error).toContain('--lenient-timestamps');
          }
        }
      } finally {
        const down = await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
        expect(down.code, down.stderr).toBe(0);
      }
    }
  });
});
