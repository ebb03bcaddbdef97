/**
 * Profiles under load: twelve `profile set` at once all land (the config file is changed under a
 * lock and renamed into place), and a TLS file that does not exist is refused at once.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('profile set', () => {
  it('twelve at once lose no profile', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tsnode-profile-lock-'));
    const env = { TSNODE_CONFIG: join(root, 'config.yaml'), HOME: root };
    const names = Array.from({ length: 12 }, (_, i) => `p${i}`);
    const results = await Promise.all(names.map((n, i) => runCli(['profile', 'set', n, '--nodes', `db${i}.example.net:8112`], { env, timeoutMs: 60_000 })));
    for (const r of results) expect(r.code).toBe(0);
    const list = await runCli(['profile', 'list', '--names'], { env });
    expect(list.stdout.trim().split('\n').sort()).toEqual([...names].sort());
    expect(readFileSync(join(root, 'config.yaml'), 'utf8')).not.toMatch(/\.lock/);
  }, 90_000);

  it('--cacert, --cert or --key naming a missing file is refused at once, and nothing is written', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tsnode-profile-cacert-'));
    const env = { TSNODE_CONFIG: join(root, 'config.yaml'), HOME: root };
    for (const flag of ['--cacert', '--cert', '--key']) {
      const r = await runCli(['profile', 'set', 'prod', '--nodes', 'db1:8112', flag, join(root, 'missing.pem')], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${flag}: ${join(root, 'missing.pem')} does not exist`);
    }
    const list = await runCli(['profile', 'list', '--names'], { env });
    expect(list.stdout).toBe('');
  });
});
