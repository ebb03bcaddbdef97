/**
 * At start, the writes an earlier process logged and did not apply are queued for the background
 * flush (a start never waits for a backlog). A sweep that acted on a series while some of its
 * records were still only in the log left an nnt_skip row naming the log position it reached, and
 * whether it deleted the raw data before a time: the records it dealt with stay out. A log naming
 * series the database does not have belongs to another database and is refused.
 */
import { join } from 'node:path';
import type { Flusher } from './flusher.js';
import type { LoggedFrame } from './ingest-log.js';
import { decodeLog } from './log-payload.js';
import { DB_FILE } from './schema.js';
import type { Statements } from './statements.js';
import { StoreOpenError } from './store-open-error.js';

/** Queues the logged records no sweep dealt with; returns how many. `dbFile`: the database's path, for the refusal. */
export function replayLog(frames: readonly LoggedFrame[], s: Statements, dbFile: string, flusher: Flusher): number {
  const skips = new Map<number, Array<{ generation: number; offset: number; before: number | null }>>();
  for (const [sid, generation, offset, before] of s.allSkips.all()) {
    let list = skips.get(sid);
    if (!list) skips.set(sid, (list = []));
    list.push({ generation, offset, before });
  }
  const known = new Set<number>();
  let queued = 0;
  for (const f of frames) {
    const batch = decodeLog(f.payload);
    queued += flusher.addLogged(batch.entries, batch.parts, (sid, ts) => {
      if (!known.has(sid)) {
        if (s.seriesById.get(sid) === undefined) {
          throw new StoreOpenError(
            `the ingest log ${join(dbFile, '..', `nnt-${f.generation}.log`)} holds records of series ${sid}, which the database does not have: the log belongs to another database (was ${DB_FILE} replaced or deleted?). Nothing was changed; move the nnt-*.log files away to start without them`,
          );
        }
        known.add(sid);
      }
      const rows = skips.get(sid);
      return !rows?.some((r) => (r.generation > f.generation || (r.generation === f.generation && r.offset > f.offset)) && (r.before === null || ts < r.before));
    });
  }
  return queued;
}
