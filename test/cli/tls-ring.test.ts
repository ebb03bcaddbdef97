/**
 * A local ring that rehearses production: HTTPS and a bearer token on every node (cluster up
 * --tls-cert/--tls-key/--require-header), then README's production commands as printed, with the
 * local seed and CA in place of db1.example.net and /etc/tsnode/prod-ca.pem.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makePki, type TestPki } from '../helpers/tls.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-tls-ring-'));
const dir = join(root, 'ring');
const TOKEN = 's3cret-token-value';
let pki: TestPki;
let urls: string[];
const env = { XDG_CONFIG_HOME: join(root, 'config'), XDG_STATE_HOME: join(root, 'state'), HOME: root, PROD_TOKEN: TOKEN };

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: readFileSync(pki.caCert), headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  pki = makePki();
  const up = await runCli(
    [
      'cluster',
      'up',
      '--count',
      '3',
      '--base-port',
      '0',
      '--dir',
      dir,
      '--detach',
      '-o',
      'json',
      '--tls-cert',
      pki.serverCert,
      '--tls-key',
      pki.serverKey,
      '--require-header',
      `Authorization: Bearer ${TOKEN}`,
    ],
    { env, timeoutMs: 60_000 },
  );
  expect(up.stderr).not.toMatch(/error/);
  expect(up.code).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
}, 90_000);
afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir], { env });
});

describe('a TLS + token local ring', () => {
  it('every node serves HTTPS and answers 401 JSON without the token, never echoing it', async () => {
    expect(urls.every((u) => u.startsWith('https://127.0.0.1:'))).toBe(true);
    const none = await get(`${urls[0]}/state`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ code: 'unauthorized', error: expect.stringMatching(/requires the authorization header/) });
    const wrong = await get(`${urls[0]}/state`, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain(TOKEN);
    expect((await get(`${urls[0]}/state`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it("README's production commands run as printed against it", async () => {
    // The README's lines, with only the seed and the CA file replaced.
    const set = await runCli(
      ['profile', 'set', 'prod', '--seed', urls[0]!, '--header-prefix', 'X-Snowth', '--cacert', pki.caCert, '--header', 'Authorization: Bearer ${PROD_TOKEN}'],
      { env },
    );
    expect(set.code).toBe(0);
    const nodes = await runCli(['nodes', '--profile', 'prod'], { env });
    expect(nodes.code).toBe(0);
    for (const u of urls) expect(nodes.stdout).toContain(u);
    const dry = await runCli(['sweep', '--before', '90d', '--types', 'nnt,histogram', '--profile', 'prod', '--dry-run'], { env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('X-Snowth-');
    for (const text of [set.stdout, set.stderr, nodes.stdout, nodes.stderr, dry.stdout, dry.stderr]) expect(text).not.toContain(TOKEN);
  });
});
