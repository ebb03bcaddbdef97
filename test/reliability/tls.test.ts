import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { Network } from '../../src/cli/network.js';
import { reportError } from '../../src/cli/runtime.js';
import { NodeRequestError } from '../../src/client/errors.js';
import { runCli } from '../helpers/cli.js';
import { testContext } from '../helpers/context.js';
import { openNetworkFromArgs } from '../helpers/network.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';
import { makePki, startTlsFrontend, type TestPki, type TlsFrontend } from '../helpers/tls.js';

// https:// nodes through the flag table, the target and openNetwork, the way every command opens its network: a TLS-terminating
// proxy with a CA made at test time sits in front of a node and records the headers it receives.
const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const SECRET = 'Bearer s3cr3t-t0ken-value-9f8e7d';
const BASE = ['--nodes', 'http://127.0.0.1:1', '--connect-timeout', '2s', '--request-timeout', '5s', '--retries', '0'];

/** The TLS and header flags of one test, as command-line arguments. */
interface TlsFlags {
  cacert?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  header?: string[];
  redact?: string[];
}

function toArgs(f: TlsFlags): string[] {
  const args = [...BASE];
  for (const k of ['cacert', 'cert', 'key'] as const) if (f[k] !== undefined) args.push(`--${k}`, f[k]);
  if (f.insecure) args.push('--insecure');
  for (const h of f.header ?? []) args.push('--header', h);
  for (const r of f.redact ?? []) args.push('--redact', r);
  return args;
}

let pki: TestPki;
let node: StubNode;
let front: TlsFrontend;
let mtls: TlsFrontend;

beforeAll(async () => {
  if (!hasOpenssl) return; // the TLS suites below are skipped; the flag-validation suite runs without a CA
  pki = makePki();
  node = await startStubNode();
  front = await startTlsFrontend(pki, node.url);
  mtls = await startTlsFrontend(pki, node.url, { requireClientCert: true });
});
afterAll(async () => {
  await front?.close();
  await mtls?.close();
  await node?.close();
  if (pki) rmSync(pki.dir, { recursive: true, force: true });
});

/** Opens the network as a command would, runs `fn`, closes; returns what happened and what was printed. */
async function run(flags: TlsFlags, fn: (net: Network) => Promise<unknown>, opts: { env?: NodeJS.ProcessEnv; verbose?: boolean } = {}) {
  const t = testContext({ ...(opts.env ? { env: opts.env } : {}), verbose: opts.verbose ?? false });
  let code: number = EXIT.ok;
  let value: unknown;
  let error: unknown;
  try {
    const net = openNetworkFromArgs(toArgs(flags), t.ctx);
    try {
      value = await fn(net);
    } finally {
      await net.close();
    }
  } catch (err) {
    error = err;
    code = reportError(err, t.ctx);
  }
  return { code, value, error, stdout: t.out(), stderr: t.err() };
}

describe.skipIf(!hasOpenssl)('TLS to https:// nodes', () => {
  it('fails without --cacert: code tls, exit 1, a message naming --cacert', async () => {
    const r = await run({}, (net) => net.client(front.url).sweepStatus());
    expect(r.error).toBeInstanceOf(NodeRequestError);
    expect((r.error as NodeRequestError).code).toBe('tls');
    expect(r.code).toBe(EXIT.failed);
    expect(r.stderr).toMatch(/TLS failed: .*(self-signed|unable to verify|local issuer)/i);
    expect(r.stderr).toMatch(/hint: .*--cacert/);
    expect(r.stdout).toBe('');
  });

  it('fails with the wrong CA, works with the right one', async () => {
    const wrong = await run({ cacert: pki.otherCa }, (net) => net.client(front.url).sweepStatus());
    expect((wrong.error as NodeRequestError).code).toBe('tls');
    const right = await run({ cacert: pki.caCert }, (net) => net.client(front.url).sweepStatus());
    expect(right.error).toBeUndefined();
    expect(right.code).toBe(EXIT.ok);
    expect(right.stderr).toBe('');
  });

  it('--insecure works without a CA and warns every run', async () => {
    const r = await run({ insecure: true }, (net) => net.client(front.url).sweepStatus());
    expect(r.error).toBeUndefined();
    expect(r.stderr).toMatch(/warning: --insecure: node certificates are NOT verified/);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment gets the --insecure warning too', async () => {
    // It does switch verification off (the node's CA is not given): so tsnode says so, every run.
    const r = await runCli(['status', '--nodes', front.url, '--retries', '0'], { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } });
    expect(r.code).toBe(EXIT.ok);
    expect(r.stderr).toMatch(/warning: NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment: node certificates are NOT verified/);
    const unset = await runCli(['status', '--nodes', front.url, '--retries', '0']);
    expect(unset.code).toBe(EXIT.failed);
    expect(unset.stderr).not.toMatch(/NOT verified/);
  });

  it('mutual TLS: refused without a client certificate, accepted with --cert/--key', async () => {
    const without = await run({ cacert: pki.caCert }, (net) => net.client(mtls.url).sweepStatus());
    expect(without.error).toBeInstanceOf(NodeRequestError);
    expect(without.code).toBe(EXIT.failed);
    expect(without.stderr).toMatch(/hint: .*--cert and --key/);
    const withCert = await run({ cacert: pki.caCert, cert: pki.clientCert, key: pki.clientKey }, (net) => net.client(mtls.url).sweepStatus());
    expect(withCert.error).toBeUndefined();
    expect(mtls.clientSubjects).toContain('client');
  });

  it('a --header reaches the node; its value appears nowhere in stdout or stderr, even with --verbose', async () => {
    const before = front.seen.length;
    const r = await run(
      { cacert: pki.caCert, header: [`Authorization: ${SECRET}`, 'X-Tenant: blue', 'X-Route-Key: rk-123456'], redact: ['x-route-key'] },
      async (net) => {
        const c = net.client(front.url);
        await c.sweepStatus();
        node.failNext(400); // an error path too
        await c.writeNnt([]).catch((err: unknown) => err);
        return net.headers;
      },
      { verbose: true, env: { TSNODE_HEADERS: 'X-From-Env: env-1; Cookie: session=abcdef; theme=dark' } },
    );
    expect(r.error).toBeUndefined();
    const got = front.seen.slice(before);
    expect(got).toHaveLength(2);
    for (const h of got) {
      expect(h.authorization).toBe(SECRET);
      expect(h['x-tenant']).toBe('blue');
      expect(h['x-route-key']).toBe('rk-123456');
      expect(h['x-from-env']).toBe('env-1');
      expect(h.cookie).toBe('session=abcdef; theme=dark');
    }
    // The verbose log names the requests and shows the headers, secrets redacted.
    expect(r.stderr).toMatch(/debug: GET https:\/\/127\.0\.0\.1:\d+\/sweep_delete -> 200 in \d+ ms/);
    expect(r.stderr).toMatch(/-> 400 in \d+ ms/);
    expect(r.stderr).toMatch(/Authorization: \[redacted\]/);
    expect(r.stderr).toMatch(/X-Tenant: blue/);
    for (const secret of [SECRET, 's3cr3t-t0ken', 'rk-123456', 'session=abcdef']) {
      expect(r.stderr).not.toContain(secret);
      expect(r.stdout).not.toContain(secret);
      expect(JSON.stringify(r.value)).not.toContain(secret);
    }
    expect(r.value).toMatchObject({ Authorization: '[redacted]', Cookie: '[redacted]', 'X-Route-Key': '[redacted]', 'X-Tenant': 'blue' });
  });
});

describe('TLS and header flags: bad input is a usage error naming the flag and the path', () => {
  it('a missing file, a file that is not PEM, a key without a cert', async () => {
    const dir = pki?.dir ?? process.cwd();
    const notPem = join(dir, 'not-pem.txt');
    writeFileSync(notPem, 'hello\n');
    const missing = await run({ cacert: join(dir, 'nope.pem') }, async () => undefined);
    expect(missing.error).toBeInstanceOf(UsageError);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/--cacert: cannot read .*nope\.pem: no such file/);
    const bad = await run({ cacert: notPem }, async () => undefined);
    expect(bad.stderr).toMatch(/--cacert: .*not-pem\.txt is not a PEM certificate/);
    const badKey = await run({ cert: notPem, key: notPem }, async () => undefined);
    expect(badKey.stderr).toMatch(/--cert: .*not-pem\.txt is not a PEM certificate/);
    const half = await run({ key: notPem }, async () => undefined);
    expect(half.stderr).toMatch(/--key needs a certificate too: mutual TLS takes both/);
    if (pki) {
      const certAsKey = await run({ cert: pki.clientCert, key: pki.clientCert }, async () => undefined);
      expect(certAsKey.stderr).toMatch(/--key: .*client\.pem is not a PEM key/);
    }
  });

  it('a bad --header or TSNODE_HEADERS entry names its source and never echoes the value', async () => {
    const inj = await run({ header: ['X-A: one\r\nX-Injected: two'] }, async () => undefined);
    expect(inj.code).toBe(EXIT.usage);
    expect(inj.stderr).toMatch(/--header: the value of "X-A" contains a line break/);
    expect(inj.stderr).not.toContain('X-Injected');
    const noColon = await run({ header: ['Bearer abcdefgh.ijkl'] }, async () => undefined);
    expect(noColon.stderr).toMatch(/--header: expected "Name: value"/);
    expect(noColon.stderr).not.toContain('abcdefgh');
    const env = await run({}, async () => undefined, { env: { TSNODE_HEADERS: 'X-Ok: 1\nBad Name: 2' } });
    expect(env.stderr).toMatch(/TSNODE_HEADERS item 2: "Bad Name" is not a valid header name/);
    const managed = await run({ header: ['Content-Length: 5'] }, async () => undefined);
    expect(managed.stderr).toMatch(/"Content-Length" is managed by the HTTP layer/);
  });
});

// The same through the built CLI, as an operator runs it: `tsnode status` (build first: npm run build).
describe.skipIf(!hasOpenssl)('tsnode status against an https:// node', () => {
  it('exits 1 with a message naming --cacert without it, and 0 with it', async () => {
    const without = await runCli(['status', '--nodes', front.url, '--retries', '0']);
    expect(without.code).toBe(1);
    // status reports per node in its table (stdout); the message carries the remedy.
    expect(without.stdout).toMatch(/TLS failed: .*--cacert/);
    // -q: results only, so stderr is empty unless something is wrong
    const withCa = await runCli(['-q', 'status', '--nodes', front.url, '--cacert', pki.caCert, '--output', 'json']);
    expect(withCa.stderr).toBe('');
    expect(withCa.code).toBe(0);
    expect(() => JSON.parse(withCa.stdout)).not.toThrow();
  });

  it('--header reaches the node and its value is in no output, with --verbose and --output json, also on errors', async () => {
    const before = front.seen.length;
    const ok = await runCli(['--verbose', 'status', '--nodes', front.url, '--cacert', pki.caCert, '--header', `Authorization: ${SECRET}`, '--output', 'json'], {
      env: { TSNODE_HEADERS: 'Cookie: sid=c00kie-value-42' },
    });
    expect(ok.code).toBe(0);
    expect(front.seen.length).toBeGreaterThan(before);
    expect(front.seen.at(-1)?.authorization).toBe(SECRET);
    expect(front.seen.at(-1)?.cookie).toBe('sid=c00kie-value-42');
    expect(ok.stderr).toMatch(/debug: GET https:\/\/127\.0\.0\.1:\d+\/sweep_delete -> 200/);
    expect(ok.stderr).toMatch(/Authorization: \[redacted\]/);
    // A 4xx is not retried: one failure for each of status's two GETs (/sweep_delete, and /state for the lag).
    node.failNext(400, 400);
    const bad = await runCli(['--verbose', 'status', '--nodes', front.url, '--cacert', pki.caCert, '--header', `Authorization: ${SECRET}`, '--output', 'json']);
    expect(bad.code).toBe(1);
    for (const r of [ok, bad]) {
      for (const s of [SECRET, 's3cr3t-t0ken', 'c00kie-value']) {
        expect(r.stdout).not.toContain(s);
        expect(r.stderr).not.toContain(s);
      }
    }
  });

  it('a bad --header is a usage error (exit 2) before anything is sent', async () => {
    const before = front.seen.length;
    const r = await runCli(['status', '--nodes', front.url, '--cacert', pki.caCert, '--header', 'no colon here']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--header: expected "Name: value"/);
    expect(front.seen.length).toBe(before);
  });
});
