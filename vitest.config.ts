import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: spawning servers and CLIs in parallel files contends; cap the pool.
    maxWorkers: 2,
    env: { FORCE_COLOR: '0', NO_COLOR: '1' },
  },
});
