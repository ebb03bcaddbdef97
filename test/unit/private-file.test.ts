import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-private-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A fresh copy of the module, so its counter of temporary names starts at 0. */
async function fresh(): Promise<typeof import('../../src/replay/private-file.js')> {
  vi.resetModules();
  return import('../../src/replay/private-file.js');
}

describe('writePrivateAtomic', () => {
  it('replaces the file with the text, readable by the user alone, and leaves no temporary file', async () => {
    const { writePrivateAtomic } = await fresh();
    const path = join(dir, 'state.json');
    writeFileSync(path, 'old');
    writePrivateAtomic(path, 'new');
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.startsWith('state.json'))).toEqual(['state.json']);
  });

  it('replaces a symbolic link at the path itself, never writing through it', async () => {
    const { writePrivateAtomic } = await fresh();
    const target = join(dir, 'target');
    writeFileSync(target, 'untouched');
    const path = join(dir, 'linked.json');
    symlinkSync(target, path);
    writePrivateAtomic(path, 'mine');
    expect(readFileSync(target, 'utf8')).toBe('untouched');
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('mine');
  });

  it('skips a temporary name already taken (planted, or left by a killed process with the same pid)', async () => {
    const { writePrivateAtomic } = await fresh();
    const now = 1_700_000_000_000;
    vi.spyOn(Date, 'now').mockReturnValue(now);
    const path = join(dir, 'taken.json');
    const names = [0, 1, 2].map((n) => `${path}.${process.pid}-${now.toString(36)}-${n}.tmp`);
    for (const name of names) writeFileSync(name, 'planted');
    writePrivateAtomic(path, 'written');
    expect(readFileSync(path, 'utf8')).toBe('written');
    for (const name of names) expect(readFileSync(name, 'utf8')).toBe('planted');
    expect(readdirSync(dir).filter((f) => f.startsWith('taken.json')).length).toBe(4);
  });
});
