/**
 * Run files are the user's, but a resume trusts them to say what to delete: a run id that is not
 * a file name, or a pinned plan edited after the run began, is refused before anything is sent.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newRun, parseRules, planRetention, serializeRunState } from '../../src/retention/index.js';
import { runInProcess } from '../helpers/in-process.js';

const NOW_MS = 1_795_321_978_250;
const DAY = 86_400;
const plan = planRetention(parseRules(['nnt:*=30d', 'text=90d']), NOW_MS, [{ node: 'http://127.0.0.1:1', nnt: [60, 300], histogram: [] }]);

function stateDirWith(runId: string, text: string, fileName = `${runId}.json`): { env: Record<string, string>; dir: string; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'tsnode-runfile-'));
  const dir = join(root, 'state', 'tsnode', 'retention');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, fileName), text);
  return { env: { XDG_STATE_HOME: join(root, 'state') }, dir, root };
}

describe('retention apply --resume over a run file', () => {
  it('refuses a run id that would name a path outside the run directory', async () => {
    const text = serializeRunState(newRun(plan, { runId: 'r-20261122T043258Z-aa', at: NOW_MS })).replace('"run_id": "r-20261122T043258Z-aa"', '"run_id": "../../../escaped-run"');
    const { env, root } = stateDirWith('r-20261122T043258Z-aa', text);
    for (const args of [['--resume', 'r-20261122T043258Z-aa'], ['--resume']]) {
      const r = await runInProcess(['retention', 'apply', ...args, '--yes'], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/run_id/);
      expect(r.stderr).not.toMatch(/internal error/);
    }
    // nothing was written next to the state directory (no escaped-run.json anywhere above it)
    expect(readdirSync(root)).toEqual(['state']);
  });

  it('refuses a file whose name is not its run id', async () => {
    const text = serializeRunState(newRun(plan, { runId: 'r-20261122T043258Z-bb', at: NOW_MS }));
    const { env } = stateDirWith('r-20261122T043258Z-cc', text);
    const r = await runInProcess(['retention', 'apply', '--resume', 'r-20261122T043258Z-cc', '--yes'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run_id "r-20261122T043258Z-bb" is not this file's name \(r-20261122T043258Z-cc\.json\)/);
  });

  it('refuses a pinned plan edited by hand (cut-off moved, age text unchanged), naming the field', async () => {
    const runId = 'r-20261122T043258Z-dd';
    const original = serializeRunState(newRun(plan, { runId, at: NOW_MS }));
    const cutoff = Math.floor(NOW_MS / 1000) - 30 * DAY;
    const moved = cutoff + 20 * DAY;
    // Moved consistently everywhere planFromJson checks it (now - age, the request header): only the fingerprint tells.
    const edited = original
      .replaceAll(`"cutoff": ${cutoff}`, `"cutoff": ${moved}`)
      .replaceAll(`"age_seconds": ${30 * DAY}`, `"age_seconds": ${10 * DAY}`)
      .replaceAll(`"X-Service-Delete-Time": "${cutoff}"`, `"X-Service-Delete-Time": "${moved}"`);
    expect(edited).not.toBe(original);
    const { env } = stateDirWith(runId, edited);
    const r = await runInProcess(['retention', 'apply', '--resume', runId, '--yes'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/plan\.steps\[0\]\.(age_seconds|cutoff) does not match the run's fingerprint: the pinned plan was edited after the run began \(nothing was sent\)/);
  });
});
