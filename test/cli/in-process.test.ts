import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';

// runInProcess() is the CLI's own run() with captured streams: for the same arguments it must
// print and exit exactly as the built bin does, or the in-process tests test something else.
describe('runInProcess runs the real CLI', () => {
  const cases: string[][] = [
    ['--version'],
    ['frobnicate'],
    ['sweep', '--before'],
    ['read', 'not-a-uuid', 'cpu', '--node', 'http://127.0.0.1:1'],
    ['status', '--nodes', 'http://127.0.0.1:1', '--retries', 'many'],
  ];
  it.each(cases)('%s ... prints and exits as the spawned bin', async (...args) => {
    const env = { NO_COLOR: '1', TSNODE_NODES: '', TSNODE_PROFILE: '' };
    const [inside, spawned] = await Promise.all([runInProcess(args, { env }), runCli(args, { env })]);
    // (the log lines' timestamps are the only thing allowed to differ)
    const shown = (r: { code: number | null; stdout: string; stderr: string }) => ({
      code: r.code,
      stdout: r.stdout,
      stderr: r.stderr.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /gm, ''),
    });
    expect(shown(inside)).toEqual(shown(spawned));
  });
});
