import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireTmux } from '../helpers/tmux.js';

// The terminal tests must fail, not skip, where tmux is missing: requireTmux is what makes them.
describe('requireTmux', () => {
  const root = mkdtempSync(join(tmpdir(), 'tsnode-tmux-helper-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('throws, saying what to install, when no directory on PATH holds tmux', () => {
    expect(() => requireTmux({ PATH: `${root}:` })).toThrow(/tmux is not on PATH.*apt-get install tmux/);
    expect(() => requireTmux({})).toThrow(/tmux is not on PATH/);
  });

  it('returns the first executable tmux on PATH, wherever it is', () => {
    const plain = join(root, 'plain');
    const bin = join(root, 'bin');
    for (const [dir, mode] of [
      [plain, 0o644],
      [bin, 0o755],
    ] as const) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(join(dir, 'tmux'), '#!/bin/sh\n');
      chmodSync(join(dir, 'tmux'), mode);
    }
    expect(requireTmux({ PATH: [plain, bin].join(':') })).toBe(join(bin, 'tmux'));
  });
});
