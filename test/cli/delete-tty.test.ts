/**
 * `tsnode delete` in a real terminal (tmux): the confirmation prompt names what goes, how many
 * metrics and node copies on how many nodes, and where the nodes came from; `n` deletes nothing.
 * Ctrl-C typed during the confirmed phase (every node's second batch held at its proxy, so each
 * node has done exactly one round) stops the run: exit 130, and the journal names every metric
 * that was deleted, which is exactly what is gone from the nodes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { caughtUp, eventually, startProxiedRing } from '../helpers/ring.js';
import { closeTerminals, openTerminal } from '../helpers/tmux.js';
import { call, UUID, write } from '../integration/server-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-delete-tty-'));
let ring: Awaited<ReturnType<typeof startProxiedRing>>;
/** The host's metrics: enough that every node owns at least two (so each has a second batch to hold). */
const NAMES: string[] = [];

async function own(i: number): Promise<string[]> {
  const r = await call(ring.nodes[i]!.url, 'GET', `/find/1/tags?query=${encodeURIComponent('and(host:tty1)')}`, { headers: { 'x-snowth-proxied': '1' } });
  return (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();
}
const everyNode = (): Promise<string[][]> => Promise.all(ring.nodes.map((_, i) => own(i)));

beforeAll(async () => {
  ring = await startProxiedRing(3, 2);
  const owned = [0, 0, 0];
  for (let k = 0; owned.some((n) => n < 2); k++) {
    const metric = `m${k}|ST[host:tty1]`;
    NAMES.push(metric);
    for (const n of ring.ring.ownersOf(UUID, metric)) owned[ring.indexOf(n.id)]! += 1;
  }
  expect(
    (
      await write(
        ring.proxies[0]!.url,
        NAMES.map((metric) => ({ metric, id: UUID, offset: 1_700_000_040, count: 1, value: 1 })),
      )
    ).status,
  ).toBe(200);
  await eventually('replication put every metric on its owners', async () => (await everyNode()).flat().length === NAMES.length * 2);
  await caughtUp(ring);
}, 60_000);

afterAll(async () => {
  closeTerminals();
  await stopAllNodes();
  rmSync(root, { recursive: true, force: true });
});

/** The delete in a 160x40 terminal, as a person runs it; the shell survives Ctrl-C to write the exit code. */
function session(name: string, extra: string[] = []) {
  const codeFile = join(root, `${name}.exit`);
  const journal = join(root, `${name}.jsonl`);
  const list = ring.proxies.map((p) => p.url).join(',');
  const cmd = [
    `trap : INT; env -u CI -u NO_COLOR FORCE_COLOR=0 TERM=xterm-256color XDG_STATE_HOME=${root}`,
    process.execPath,
    BIN,
    'delete',
    `'and(host:tty1)'`,
    '--full',
    '--nodes',
    list,
    '--journal',
    journal,
    ...extra,
    `; echo $? > ${codeFile}; sleep 600`,
  ].join(' ');
  const term = openTerminal(cmd, { columns: 160, rows: 40 });
  return { term, journal, exited: () => existsSync(codeFile), code: () => readFileSync(codeFile, 'utf8').trim() };
}

it('the prompt names the metrics, the node copies and the nodes; no deletes nothing (exit 2)', async () => {
  const s = session('no');
  await s.term.until('the prompt', () => /\[y\/N\]/.test(s.term.history()));
  expect(s.term.history()).toContain(
    `Delete all data and the names of ${NAMES.length} metrics with data to delete (${NAMES.length * 2} node copies) on 3 of 3 nodes (nodes: --nodes, 3 nodes)? [y/N]`,
  );
  s.term.keys('n', 'Enter');
  await s.term.until('the exit', s.exited);
  expect(s.code()).toBe('2');
  expect(s.term.history()).toContain('delete not confirmed: nothing was deleted');
  expect((await everyNode()).flat().length).toBe(NAMES.length * 2);
}, 30_000);

it('a node that stops answering while you answer: the second look refuses the run, nothing deleted (exit 2)', async () => {
  const s = session('second-look', ['--retries', '0', '--connect-timeout', '1s']);
  await s.term.until('the prompt', () => /\[y\/N\]/.test(s.term.history()));
  const victim = ring.nodes[2]!;
  await victim.kill();
  s.term.keys('y', 'Enter');
  await s.term.until('the exit', s.exited);
  const all = s.term.history();
  expect(s.code(), all).toBe('2');
  expect(all).toContain(`${ring.proxies[2]!.url}: the dry run failed:`);
  expect(all).toContain('(the second look after your answer)');
  expect(all).toContain('refusing to delete: nothing was deleted');
  // A refused run leaves its trace, and nothing else: no start line.
  const lines = readFileSync(s.journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; codes: string[] });
  expect(lines).toMatchObject([{ kind: 'run.refused', codes: ['unreachable'] }]);
  ring.nodes[2] = await victim.restart();
  expect((await everyNode()).flat().length).toBe(NAMES.length * 2);
  // Nothing confirmed was sent anywhere.
  for (const p of ring.proxies) expect(p.exchanges.some((ex) => ex.headers['x-snowth-confirm-delete'] === '1')).toBe(false);
}, 30_000);

it('Ctrl-C in the confirmed phase: exit 130, and the journal names exactly what was deleted', async () => {
  // Each node's second confirmed call waits at its proxy (never forwarded): each has done one round.
  const seen = ring.proxies.map((p) => p.exchanges.length);
  const holds = ring.proxies.map((p) => {
    let n = 0;
    return p.hold((ex) => ex.method === 'DELETE' && ex.headers['x-snowth-confirm-delete'] === '1' && ++n === 2);
  });
  const s = session('ctrl-c', ['--batch', '1']);
  await s.term.until('the prompt', () => /\[y\/N\]/.test(s.term.history()));
  s.term.keys('y', 'Enter');
  let arrived = 0;
  for (const h of holds) void h.arrived.then(() => arrived++);
  await s.term.until('every node at its second batch', () => arrived === holds.length);
  s.term.keys('C-c');
  await s.term.until('the exit', s.exited);
  const all = s.term.history();
  expect(s.code(), all).toBe('130');
  expect(all).toContain('interrupted: 3 metric copies deleted before the stop (the journal has each round)');
  expect(all).toMatch(/to catch up: tsnode delete 'and\(host:tty1\)' --full --batch 1 --nodes \S+ --journal /);
  const lines = readFileSync(s.journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; node?: string; deleted?: Array<{ metric_name: string }>; exit?: number; interrupted?: boolean; nodes?: Array<{ state: string }> });
  expect(lines.at(-1)).toMatchObject({ kind: 'delete.end', exit: 130, interrupted: true });
  expect(lines.at(-1)!.nodes!.map((n) => n.state)).toEqual(['interrupted', 'interrupted', 'interrupted']);
  const after = await everyNode();
  for (const [i, p] of ring.proxies.entries()) {
    // The dry run, then the second look after the answer, then the confirmed calls.
    const deletes = p.exchanges
      .slice(seen[i])
      .filter((ex) => ex.method === 'DELETE')
      .map((ex) => ex.headers['x-snowth-confirm-delete'] ?? 'look');
    expect(deletes.slice(0, 3)).toEqual(['look', 'look', '1']);
    const said = lines.filter((l) => l.kind === 'delete.round' && l.node === p.url).flatMap((l) => l.deleted!.map((m) => m.metric_name));
    expect(said).toHaveLength(1);
    // What the journal says went from node i is exactly what node i no longer holds.
    const owned = NAMES.filter((m) => ring.ring.ownersOf(UUID, m).some((n) => ring.indexOf(n.id) === i));
    expect(owned.filter((m) => !after[i]!.includes(m))).toEqual(said);
  }
}, 30_000);
