import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { BIN } from '../helpers/cli.js';

// Concurrent starts on one data dir with a stale lock: 5 `tsnode serve` at once, many times.
// The old pid-file lock let two of them through in 4 of 28 trials (both wrote the same log, and
// acknowledged writes were lost after a restart). With the OS-held lock exactly one may win.
const ROUNDS = Number(process.env.TSNODE_LOCK_ROUNDS ?? 6);
const STARTS = 5;
const UUID = '10c4ace0-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dirs: string[] = [];
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Start {
  child: ChildProcess;
  url?: string;
  exit?: number | null;
  stderr: string;
}

/** Starts `tsnode serve` and settles once it is ready (url) or has exited. */
function serve(dir: string): Promise<Start> {
  const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const s: Start = { child, stderr: '' };
  child.stderr.setEncoding('utf8').on('data', (d: string) => (s.stderr += d));
  return new Promise((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      const m = /listening on (http:\/\/\S+)/.exec(d);
      if (m) {
        s.url = m[1];
        resolve(s);
      }
    });
    child.once('exit', (code) => {
      s.exit = code;
      children.delete(child);
      resolve(s);
    });
  });
}

const stop = (c: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> =>
  new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) {
      resolve();
      return;
    }
    c.once('exit', () => resolve());
    c.kill(signal);
  });

describe('concurrent starts on one data dir', () => {
  it(`${ROUNDS} rounds of ${STARTS} simultaneous starts on a stale lock: exactly one node each time, the others refused, no write lost`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-lockrace-'));
    dirs.push(dir);
    let winners = 0;
    let refused = 0;
    let twoAtOnce = 0;
    let written = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // The stale lock of the round: an old pid file naming a dead pid, one naming a live
      // unrelated process (pid 1), or the lock file a killed node left (previous round).
      if (round % 3 === 0) writeFileSync(join(dir, 'tsnode.lock'), '999999\n');
      if (round % 3 === 1) writeFileSync(join(dir, 'tsnode.lock'), '1\n');
      const starts = await Promise.all(Array.from({ length: STARTS }, () => serve(dir)));
      const up = starts.filter((s) => s.url !== undefined);
      const down = starts.filter((s) => s.url === undefined);
      if (up.length > 1) twoAtOnce++;
      winners += up.length;
      for (const s of down) {
        expect(s.exit, s.stderr).toBe(1);
        // The holder's pid when /proc/locks shows one; in a race the lock that refused this start
        // may have been another loser's passing one, gone before the look: then "another process".
        // (server-store-open.test.ts pins the pid where the holder stays.)
        expect(s.stderr, s.stderr).toMatch(/is in use by (process \d+|another process) /);
        refused++;
      }
      expect(up, starts.map((s) => s.stderr).join('\n')).toHaveLength(1);
      // The winner takes writes; it is then killed (its lock file stays behind for the next round).
      const url = up[0]!.url!;
      const body = JSON.stringify(Array.from({ length: 100 }, (_, k) => ({ metric: 'race', id: UUID, offset: (round * 100 + k) * 60, count: 1, value: round * 100 + k })));
      const res = await request(`${url}/write/nnt`, { method: 'POST', body });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      written += 100;
      await stop(up[0]!.child, round % 2 === 0 ? 'SIGKILL' : 'SIGTERM');
    }
    // Every acknowledged write is there.
    const last = await serve(dir);
    expect(last.url, last.stderr).toBeDefined();
    const res = await request(`${last.url}/rollup/${UUID}/race?start_ts=0.000&end_ts=${ROUNDS * 100 * 60}.000&rollup_span=60s&get_engine=nnt`);
    const rows = (await res.body.json()) as Array<[number, number | null]>;
    const lost = rows.filter(([ts, v]) => v !== ts / 60).length;
    await stop(last.child);
    console.log(
      `lock-race: ${ROUNDS} rounds x ${STARTS} simultaneous starts: ${winners} started, ${refused} refused (in use), ${twoAtOnce} rounds with two nodes on the directory; ${written} acknowledged records, ${lost} lost`,
    );
    expect(twoAtOnce).toBe(0);
    expect(lost).toBe(0);
  }, 120_000);
});
