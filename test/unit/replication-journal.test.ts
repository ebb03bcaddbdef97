import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PeerJournal } from '../../src/server/replication/journal.js';
import type { JournalEntry } from '../../src/server/replication/payload.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function journalDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-journal-'));
  dirs.push(d);
  return join(d, 'peer');
}

const entry = (n: number, at = 1000 + n): JournalEntry => ({
  kind: 'nnt',
  journaledAt: at,
  oldestOffset: 60 * n,
  records: 1,
  json: JSON.stringify({ id: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', metric: `m${n}`, offset: 60 * n, count: 1, value: n }),
});

const values = (j: PeerJournal): number[] => j.next(100, 1 << 20).map((d) => (JSON.parse(d.entry.json) as { value: number }).value);
const logFile = (dir: string): string =>
  join(
    dir,
    readdirSync(dir).find((f) => /^journal-\d+\.log$/.test(f) && statSync(join(dir, f)).size > 16)!,
  );

describe('PeerJournal', () => {
  it('delivers in order, forgets only what was acknowledged, and resumes from its cursor after a restart', () => {
    const dir = journalDir();
    const notices: string[] = [];
    let j = new PeerJournal(dir, (m) => notices.push(m));
    for (let n = 1; n <= 3; n++) j.append(entry(n));
    expect(j.records).toBe(3);
    expect(j.oldest).toMatchObject({ journaledAt: 1001, oldestOffset: 60 });
    const first = j.next(1, 1 << 20);
    expect(first).toHaveLength(1);
    j.ack(first);
    expect(j.records).toBe(2);
    j.append(entry(4));
    j.close();
    j = new PeerJournal(dir, (m) => notices.push(m));
    expect(j.records).toBe(3);
    expect(values(j)).toEqual([2, 3]); // the ended generation first; entry 4 went to the next one
    j.ack(j.next(100, 1 << 20));
    expect(values(j)).toEqual([4]);
    j.ack(j.next(100, 1 << 20));
    expect(j.records).toBe(0);
    expect(j.oldest).toBeNull();
    expect(notices).toEqual([]);
    j.close();
  });

  it('a damaged frame is reported and skipped; the intact ones after it still replay', () => {
    const dir = journalDir();
    let j = new PeerJournal(dir, () => {});
    for (let n = 1; n <= 3; n++) j.append(entry(n));
    j.close();
    const file = logFile(dir);
    const bytes = readFileSync(file);
    const at = bytes.indexOf(Buffer.from('"m2"'));
    bytes[at + 1] = bytes[at + 1]! ^ 0xff; // flip a byte inside the second frame's payload: its checksum fails
    writeFileSync(file, bytes);
    const notices: string[] = [];
    j = new PeerJournal(dir, (m) => notices.push(m));
    expect(notices.join('\n')).toMatch(/is damaged: 2 intact frames replay/);
    expect(values(j)).toEqual([1, 3]);
    j.close();
  });

  it('a torn last frame (a crash mid-append, never acknowledged) is dropped with a notice', () => {
    const dir = journalDir();
    let j = new PeerJournal(dir, () => {});
    for (let n = 1; n <= 2; n++) j.append(entry(n));
    j.close();
    const file = logFile(dir);
    truncateSync(file, statSync(file).size - 5);
    const notices: string[] = [];
    j = new PeerJournal(dir, (m) => notices.push(m));
    expect(notices.join('\n')).toMatch(/dropped \d+ bytes of an append a crash cut off/);
    expect(values(j)).toEqual([1]);
    j.close();
  });

  it('dead letters keep the refused records with the answer, leave the journal, and are counted across restarts', () => {
    const dir = journalDir();
    let j = new PeerJournal(dir, () => {});
    j.append(entry(1));
    j.append(entry(2));
    const [d] = j.next(1, 1 << 20);
    j.settle(d!, [{ record: JSON.parse(d!.entry.json), status: 400, answer: '{"error":"bad offset"}' }]);
    expect(j.deadLetters).toBe(1);
    expect(j.records).toBe(1);
    const line = JSON.parse(readFileSync(join(dir, 'dead-letters.ndjson'), 'utf8').trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ status: 400, answer: '{"error":"bad offset"}', kind: 'nnt', records: [{ metric: 'm1', value: 1 }] });
    j.close();
    j = new PeerJournal(dir, () => {});
    expect(j.deadLetters).toBe(1);
    expect(values(j)).toEqual([2]);
    j.close();
  });
});
