import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { BIN } from '../helpers/cli.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

// A byte flipped in the middle of an unapplied ingest log, on a real `tsnode serve`: the old node
// applied the frames before it, marked the log applied and deleted it (800 of 1,000 acknowledged
// records gone, with the evidence). Now the start is refused naming the frame, the file is kept,
// and --salvage-log gives up only the damaged frame.
const UUID = 'dada0000-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const FRAMES = 10;
const PER_FRAME = 100;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-logdamage-'));
afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
});

const logsOf = (d: string) => readdirSync(d).filter((f) => /^nnt-\d+\.log$/.test(f));

describe('a damaged ingest log on a real node', () => {
  it('refuses to start, keeps the file, names the frame; --salvage-log loses only that frame', async () => {
    // A node whose flushes never get to apply anything (paced a minute per series), killed.
    const node = await startNode({ dataDir: dir, rollups: [60, 300], args: ['--flush-pause', '60000'] });
    for (let f = 0; f < FRAMES; f++) {
      const body = JSON.stringify(Array.from({ length: PER_FRAME }, (_, k) => ({ metric: 'dmg', id: UUID, offset: (f * PER_FRAME + k) * 60, count: 1, value: f * PER_FRAME + k })));
      const res = await request(`${node.url}/write/nnt`, { method: 'POST', body });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    }
    await node.kill();
    const [name] = logsOf(dir).filter((f) => statSync(join(dir, f)).size > 16);
    const log = join(dir, name!);
    const bytes = readFileSync(log);
    // Frame 4's payload, one byte flipped.
    let at = 16;
    for (let f = 0; f < 3; f++) at += 12 + bytes.readUInt32LE(at + 4);
    bytes[at + 12 + 40] = bytes[at + 12 + 40]! ^ 0x5a;
    writeFileSync(log, bytes);

    const refused = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir, '--rollups', '60,300'], { encoding: 'utf8', timeout: 15_000 });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(log);
    expect(refused.stderr).toMatch(/\(frame 4\) cannot be read, and 6 intact frame\(s\) after them hold 600 acknowledged record\(s\)/);
    expect(refused.stderr).toContain('--salvage-log');
    expect(readFileSync(log).equals(bytes)).toBe(true);

    const salvaging = await startNode({ dataDir: dir, rollups: [60, 300], args: ['--salvage-log'] });
    const res = await request(`${salvaging.url}/rollup/${UUID}/dmg?start_ts=0.000&end_ts=${FRAMES * PER_FRAME * 60}.000&rollup_span=60s&get_engine=nnt`);
    const rows = (await res.body.json()) as Array<[number, number | null]>;
    const present = rows.filter(([, v]) => v !== null).length;
    const lostFrame = rows.filter(([ts, v]) => v === null && ts / 60 >= 3 * PER_FRAME && ts / 60 < 4 * PER_FRAME).length;
    const lostElsewhere = rows.filter(([ts, v]) => (v === null || v !== ts / 60) && !(ts / 60 >= 3 * PER_FRAME && ts / 60 < 4 * PER_FRAME)).length;
    await salvaging.stop();
    expect(existsSync(`${log}.damaged`)).toBe(true);
    console.log(
      `log-damage: ${FRAMES * PER_FRAME} acknowledged records in ${FRAMES} frames, one byte flipped in frame 4: start refused (exit 1, file kept); ` +
        `--salvage-log: ${present} records back, ${lostFrame} lost with the damaged frame, ${lostElsewhere} lost elsewhere`,
    );
    expect(present).toBe((FRAMES - 1) * PER_FRAME);
    expect(lostFrame).toBe(PER_FRAME);
    expect(lostElsewhere).toBe(0);
  }, 60_000);
});
