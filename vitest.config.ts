import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: spawning servers and CLIs in parallel files contends; cap the pool.
    maxWorkers: 2,
    // XDG_STATE_HOME: every CLI a test spawns journals its sweeps there, never in the user's own state dir.
    env: { FORCE_COLOR: '0', NO_COLOR: '1', XDG_STATE_HOME: join(tmpdir(), `tsnode-test-state-${process.pid}`), TSNODE_STATE_DIR: '' },
  },
});
