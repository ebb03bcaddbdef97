/**
 * Checkpoints the database's WAL on a thread of its own. A checkpoint copies every page the
 * flushes wrote back into the database file and fsyncs it: about a third of the flush time when
 * it ran inside the flush's commit. Here it runs beside the node's event loop, as a second
 * SQLite connection (WAL lets a checkpointer work while the writer goes on).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// The worker's source, evaluated as CommonJS: a worker file would not exist next to the
// TypeScript sources the tests run.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
// A failure is told once, not twice a second for as long as it lasts (a full disk).
let failing = null;
let timer = null;
let closed = false;
let told = null;
const tick = () => {
  timer = null;
  if (closed) return;
  let behind = false;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    // Frames left to copy: go on at once. The writer is told when this catches up or falls
    // behind: a WAL is only reused from its start when a write begins while every frame is
    // copied, so a writer that sees a large WAL waits for that (see SqliteStore).
    behind = r.busy !== 0 || r.checkpointed < r.log;
    // Caught up with a large WAL and writes still coming: RESTART makes the next write reuse it
    // from its start (holding writers back only for the frames written since).
    if (!behind && r.log > workerData.restartFrames) db.pragma('wal_checkpoint(RESTART)');
    if (told !== behind) parentPort.postMessage({ behind });
    told = behind;
    failing = null;
  } catch (err) {
    const message = String(err && err.message || err);
    if (failing !== message) parentPort.postMessage({ error: message });
    failing = message;
  }
  timer = behind ? setTimeout(tick, 1) : setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'close') {
    closed = true;
    if (timer) clearTimeout(timer);
    db.close();
    parentPort.close();
  }
});
`;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly done: Promise<void>;

  /** Whether the last checkpoint left frames to copy (the WAL cannot be reused from its start yet). */
  behind = false;

  constructor(file: string, intervalMs: number, onError: (err: unknown) => void) {
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    // 4096 frames: 64 MiB of 16 KiB pages.
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, intervalMs, sqlite, restartFrames: 4096 } });
    this.worker.on('message', (m: { error?: string; behind?: boolean }) => {
      if (m.error) onError(new Error(`WAL checkpoint: ${m.error}`));
      if (m.behind !== undefined) this.behind = m.behind;
    });
    this.worker.on('error', onError);
    this.done = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // It must not keep the process alive on its own.
    this.worker.unref();
  }

  /** Stops it; resolves once its thread (and its connection) is gone. */
  close(): Promise<void> {
    // Held while it closes: otherwise a process with nothing else to do (a node that failed to
    // start right after opening its store) ends before the thread does, silently, with exit 0.
    this.worker.ref();
    this.worker.postMessage('close');
    return this.done;
  }
}
