/**
 * The acceptance check of the store's write example, run literally: real curl, `-d @data.json`
 * with the page's exact file, against a real node started with the page's rollups. curl is part
 * of the CI image; when it is missing this file fails and says so (it never skips).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { SWEEP_DOC, WRITE_HISTOGRAM_DOC, WRITE_NNT_DOC } from './fixtures/store-docs.js';

let node: TestNode;
let dir: string;

function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', ...args], { cwd: dir, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  const probe = spawnSync('curl', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `curl is needed to run the store's curl examples literally, and it is not installed (${probe.error?.message ?? `exit ${probe.status}`}); install it, e.g. apt-get install -y curl`,
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'tsnode-curl-'));
  writeFileSync(join(dir, 'data.json'), WRITE_NNT_DOC.body);
  writeFileSync(join(dir, 'histogram.json'), WRITE_HISTOGRAM_DOC.body);
  node = await startNode({ rollups: [...WRITE_NNT_DOC.rollups] });
});
afterAll(async () => {
  await stopAllNodes();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the store's curl examples, with real curl", () => {
  it(`${WRITE_NNT_DOC.page}: curl -X POST -d @data.json .../write/nnt stores both records`, async () => {
    const r = await curl(['-X', 'POST', '-d', '@data.json', `${node.url}/write/nnt`]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    const read = await curl([`${node.url}/rollup/${WRITE_NNT_DOC.uuid}/example2?start_ts=1408724400.000&end_ts=1408724700.000&rollup_span=300s&type=count`]);
    expect(JSON.parse(read.stdout)).toEqual([[WRITE_NNT_DOC.offset, 5]]);
  });

  it(`${WRITE_HISTOGRAM_DOC.page}: curl -X POST -d @data.json .../histogram/write`, async () => {
    const r = await curl(['-X', 'POST', '-d', '@histogram.json', `${node.url}/histogram/write`]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
  });

  it(`${SWEEP_DOC.page}: curl -X DELETE -H 'X-Snowth-Delete-Time: ...' .../sweep_delete`, async () => {
    const headers = Object.entries(SWEEP_DOC.deletes[1].headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const r = await curl(['-X', 'DELETE', ...headers, `${node.url}/sweep_delete`]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const status = await curl([`${node.url}/sweep_delete`]);
    expect(Object.keys(JSON.parse(status.stdout))).toEqual(['nnt', 'text', 'histogram']);
  });
});
