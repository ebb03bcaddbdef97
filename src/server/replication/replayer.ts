/**
 * The replayer of one peer: sends the peer's journal to it in order, a batch at a time, and lets
 * the journal forget a batch only once the peer acknowledged it (2xx). While the peer is down or
 * answers 5xx it backs off (doubling, up to a few seconds) and tries again; a batch the peer refuses
 * for good (4xx) is retried entry by entry, and an entry refused alone goes to the dead letters.
 * Paused (`cluster pause`), it sends nothing and the journal grows.
 */
import { REPLAYED_FROM_HEADER, type DataType } from '../../protocol/index.js';
import { DEAD_LETTERS, type Deliverable, type PeerJournal } from './journal.js';
import { recordsArray } from './payload.js';
import { callPeer } from './peer-call.js';

const WRITE_PATH: Record<DataType, string> = { nnt: '/write/nnt', text: '/write/text', histogram: '/histogram/write' };
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 3_000;
const TIMEOUT_MS = 30_000;
/** Limits every replayer shares: batches in flight at once across all peers. */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = Math.max(1, n);
  }
  async take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

export interface ReplayerOptions {
  selfId: string;
  peerUrl: string;
  batchRecords: number;
  maxBatchBytes: number;
  slots: Slots;
  onNotice: (message: string) => void;
}

export class Replayer {
  paused = false;
  lastError: string | null = null;
  /** Records the peer acknowledged since this process started. */
  delivered = 0;
  private closed = false;
  private wakeUp: (() => void) | null = null;
  /** While > 0, a refused batch is being retried one entry at a time. */
  private singles = 0;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    readonly journal: PeerJournal,
    private readonly opts: ReplayerOptions,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  /** New entries, a resume or a close: the loop looks again at once. */
  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.loop;
  }

  private sleep(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === null ? null : setTimeout(() => this.wake(), ms);
      this.wakeUp = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    let backoff = MIN_BACKOFF_MS;
    while (!this.closed) {
      if (this.paused || this.journal.records === 0) {
        await this.sleep(null);
        continue;
      }
      let batch: Deliverable[];
      try {
        batch = this.journal.next(this.singles > 0 ? 1 : this.opts.batchRecords, this.singles > 0 ? 1 : this.opts.maxBatchBytes);
      } catch (err) {
        this.lastError = `cannot read the journal: ${err instanceof Error ? err.message : String(err)}`;
        await this.sleep(MAX_BACKOFF_MS);
        continue;
      }
      if (batch.length === 0) continue;
      await this.opts.slots.take();
      let ok: boolean;
      try {
        ok = await this.send(batch);
      } finally {
        this.opts.slots.give();
      }
      if (ok) {
        backoff = MIN_BACKOFF_MS;
        continue;
      }
      if (this.closed) break;
      await this.sleep(backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }

  /** Sends one batch; true when the journal moved on (delivered or dead-lettered), false to back off. */
  private async send(batch: Deliverable[]): Promise<boolean> {
    const kind = batch[0]!.entry.kind;
    try {
      const answer = await this.put(kind, recordsArray(batch.map((d) => d.entry)));
      if (answer.ok) {
        this.journal.ack(batch);
        this.delivered += batch.reduce((s, d) => s + d.records, 0);
        this.lastError = null;
        if (this.singles > 0) this.singles--;
        return true;
      }
      if (!answer.forGood) {
        this.lastError = `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`;
        return false;
      }
      if (batch.length > 1) {
        // Which entry is refused? Each of this batch goes alone next.
        this.singles = batch.length;
        return true;
      }
      return await this.sendRecordByRecord(batch[0]!);
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      return false;
    }
  }

  /** One refused entry: each record alone, so only the ones the peer refuses become dead letters. */
  private async sendRecordByRecord(d: Deliverable): Promise<boolean> {
    const records = JSON.parse(Buffer.concat(recordsArray([d.entry])).toString('utf8')) as unknown[];
    const refused: Array<{ record: unknown; status: number; answer: string }> = [];
    for (const record of records) {
      const answer = await this.put(d.entry.kind, `[${JSON.stringify(record)}]`);
      if (answer.ok) continue;
      if (!answer.forGood) {
        this.lastError = `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`;
        return false; // the whole entry again later (records applied twice change nothing)
      }
      refused.push({ record, status: answer.status, answer: answer.text });
    }
    this.journal.settle(d, refused);
    this.delivered += records.length - refused.length;
    if (this.singles > 0) this.singles--;
    if (refused.length > 0) {
      const first = refused[0]!;
      this.opts.onNotice(
        `replication to ${this.opts.peerUrl}: the peer refused ${refused.length} of ${records.length} ${d.entry.kind} records for good (HTTP ${first.status}: ${first.answer.slice(0, 200)}); kept in ${this.journal.dir}/${DEAD_LETTERS}`,
      );
    }
    return true;
  }

  private async put(kind: DataType, body: readonly Uint8Array[] | string): Promise<{ ok: boolean; forGood: boolean; status: number; text: string }> {
    const answer = await callPeer({
      method: 'PUT',
      url: `${this.opts.peerUrl}${WRITE_PATH[kind]}`,
      headers: { 'content-type': 'application/json', [REPLAYED_FROM_HEADER]: this.opts.selfId },
      body,
      timeoutMs: TIMEOUT_MS,
      maxAnswerBytes: 64 * 1024,
    });
    const status = answer.status;
    const text = answer.body.toString('utf8').slice(0, 2000);
    return { ok: status >= 200 && status < 300, forGood: status >= 400 && status < 500 && status !== 408 && status !== 429, status, text };
  }
}
