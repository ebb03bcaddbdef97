import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PeerJournal } from '../../src/server/replication/journal.js';
import type { EntryHead } from '../../src/server/replication/payload.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function journalDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-journal-'));
  dirs.push(d);
  return join(d, 'peer');
}

const head = (n: number, at = 1000 + n): EntryHead => ({ kind: 'nnt', journaledAt: at, oldestOffset: 60 * n, records: 1 });
/** A record in a buffer of its own (a request body is one; a pooled small buffer would count as its whole pool). */
const record = (n: number): Buffer => {
  const text = JSON.stringify({ id: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', metric: `m${n}`, offset: 60 * n, count: 1, value: n });
  const b = Buffer.alloc(Buffer.byteLength(text));
  b.write(text);
  return b;
};
const append = (j: PeerJournal, n: number): void => j.append(head(n), [record(n)]);

const values = (j: PeerJournal): number[] => j.next(100, 1 << 20).map((d) => (JSON.parse(Buffer.concat(d.entry.json).toString()) as { value: number }).value);
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
    for (let n = 1; n <= 3; n++) append(j, n);
    expect(j.records).toBe(3);
    expect(j.oldest).toMatchObject({ journaledAt: 1001, oldestOffset: 60 });
    const first = j.next(1, 1 << 20);
    expect(first).toHaveLength(1);
    j.ack(first);
    expect(j.records).toBe(2);
    append(j, 4);
    j.close();
    j = new PeerJournal(dir, (m) => notices.push(m));
    expect(j.records).toBe(3);
    expect(values(j)).toEqual([2, 3, 4]); // read back from the file: entry 1 is behind the cursor
    j.ack(j.next(100, 1 << 20));
    expect(j.records).toBe(0);
    expect(j.oldest).toBeNull();
    expect(notices).toEqual([]);
    j.close();
  });

  it('a damaged frame is reported and skipped; the intact ones after it still replay', () => {
    const dir = journalDir();
    let j = new PeerJournal(dir, () => {});
    for (let n = 1; n <= 3; n++) append(j, n);
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
    for (let n = 1; n <= 2; n++) append(j, n);
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
    append(j, 1);
    append(j, 2);
    const [d] = j.next(1, 1 << 20);
    j.settle(d!, [{ record: JSON.parse(Buffer.concat(d!.entry.json).toString()), status: 400, answer: '{"error":"bad offset"}' }]);
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

  it('delivers the newest entries from memory and older ones from their file, in order, whatever the mix', () => {
    const dir = journalDir();
    // Room in memory for about two entries: the third and later are read back from the file.
    const j = new PeerJournal(dir, () => {}, { keepBytes: 2 * record(1).byteLength + 4, cursorEveryBytes: 1 << 20 });
    let last = 5;
    for (let n = 1; n <= last; n++) append(j, n);
    const got: number[] = [];
    for (let batch = j.next(2, 1 << 20); batch.length > 0 && got.length < 12; batch = j.next(2, 1 << 20)) {
      got.push(...batch.map((d) => (JSON.parse(Buffer.concat(d.entry.json).toString()) as { value: number }).value));
      j.ack(batch);
      if (last < 10) append(j, ++last); // appended while delivering: kept in memory again once there is room
    }
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(j.records).toBe(0);
    j.close();
  });

  it('sends the entries it keeps in memory without reading its file back', () => {
    const dir = journalDir();
    const j = new PeerJournal(dir, () => {});
    append(j, 1);
    append(j, 2);
    truncateSync(logFile(dir), 16); // the frames are gone from the file: only memory can still have them
    expect(values(j)).toEqual([1, 2]);
    j.close();
  });

  it('writes its cursor every so many delivered bytes and at close, not per batch: a crash sends at most that much again', () => {
    const dir = journalDir();
    const size = 22 + record(1).byteLength; // an entry's payload: its head and its record
    let j = new PeerJournal(dir, () => {}, { keepBytes: 1 << 20, cursorEveryBytes: 3 * size });
    for (let n = 1; n <= 5; n++) append(j, n);
    /** What a process started after a kill -9 at this moment would send (on a copy of the directory). */
    const afterCrash = (): number[] => {
      const copy = `${dir}-crash`;
      rmSync(copy, { recursive: true, force: true });
      cpSync(dir, copy, { recursive: true });
      const again = new PeerJournal(copy, () => {});
      const v = values(again);
      again.close();
      return v;
    };
    j.ack(j.next(1, 1 << 20));
    j.ack(j.next(1, 1 << 20));
    expect(afterCrash()).toEqual([1, 2, 3, 4, 5]); // no cursor written yet: 1 and 2 go again
    j.ack(j.next(1, 1 << 20)); // the third delivery reaches the threshold: the cursor is written
    expect(afterCrash()).toEqual([4, 5]);
    j.ack(j.next(1, 1 << 20));
    j.close(); // and at close
    j = new PeerJournal(dir, () => {});
    expect(values(j)).toEqual([5]);
    j.close();
  });
});
