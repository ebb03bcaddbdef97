import { closeSync, constants, existsSync, ftruncateSync, fstatSync, lstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { NodeHttpError, NodeRequestError } from '../client/errors.js';
import type { NodeClient } from '../client/node-client.js';
import { backoffDelay, DEFAULT_RETRY, type RetryPolicy } from '../client/retry.js';
import { Batcher, BodyPool, batchBody, batchTexts, rejectInput, type Batch, type Position, type RejectEntry } from '../records/batch.js';
import type { RecordKind } from '../records/kinds.js';
import { openRecords, statSource, type FormatChoice, type RecordFormat, type SourceInfo } from '../records/reader.js';
import type { Ring } from '../ring/index.js';
import { checkSavedKind, writerFor } from './kinds.js';
import { OwnerQueue, type QueuedSlice } from './owner-queue.js';
import { joinSlices, OwnerRouter, type OwnerSlice, type RoutedBatch } from './owners.js';
import { openPrivate } from './private-file.js';
import { addCounts, checkInput, checkPosition, loadState, LowWater, noCounts, rejectedOf, removeState, saveState, type ReplayState, type SettledCounts } from './state.js';

export type Target = 'any' | 'all' | 'owners';

export interface ReplayOptions {
  /** One client per node (sharing the run's dispatcher). */
  clients: readonly NodeClient[];
  /**
   * `any`: each batch to one node, round-robin with failover. `all`: every batch to every node.
   * `owners`: each record to its `write_copies` owners on `ring`, batched per node, never to
   * another node (an owner that fails gets its records in the rejects file, naming it).
   */
  to?: Target;
  /** With `to: 'owners'`: the ring; `clients[k]` must reach the ring's node k (topology order). */
  ring?: Ring;
  /**
   * What the records are (default `nnt`): numeric (`/write/nnt`), text (`/write/text`) or
   * histogram (`/histogram/write`). Each record is checked by that kind's rule; routing, rejects
   * and resume are the same for every kind.
   */
  kind?: RecordKind;
  format?: FormatChoice;
  batchSize?: number;
  batchBytes?: number;
  /** Batches in flight at once. */
  concurrency?: number;
  method?: 'POST' | 'PUT';
  /** Where invalid and unwritable records go (NDJSON). Required unless dryRun. */
  rejectsPath?: string;
  /** Stop once more than this many records were rejected. */
  maxErrors?: number;
  /** Records per second (token bucket). */
  rate?: number;
  /** Numeric records: the nodes' smallest span; offsets must be aligned to it. */
  smallestSpan?: number;
  /** Histogram records: the periods the nodes keep; a record's `period` must be one of them. */
  histogramPeriods?: readonly number[];
  /** Validate every input first; send nothing when any record is invalid. */
  strict?: boolean;
  /** Where the acknowledged position is saved; no state when undefined. */
  statePath?: string;
  /** Skip what the state file says is done. */
  resume?: boolean;
  /** Resume even when an input changed since the saved run. */
  allowChangedInput?: boolean;
  /** @deprecated the old name of `allowChangedInput`. */
  force?: boolean;
  /** Validate and batch, send nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** For `-`. */
  stdin?: Readable;
  onProgress?: (p: ReplayProgress) => void;
  onEvent?: (e: ReplayEvent) => void;
  /** Shortest gap between two state-file writes. */
  stateIntervalMs?: number;
  /** How long a node that failed a batch is left alone before it gets batches again. */
  unhealthyMs?: number;
  /**
   * Resending a batch whose acknowledgement counted fewer (or more) records than it held
   * (default: 3 more tries with backoff). Other failures are retried by the clients' own policy.
   */
  ackRetry?: RetryPolicy;
  now?: () => number;
}

export interface ReplayProgress {
  read: number;
  written: number;
  rejected: number;
  batches: number;
  retries: number;
  failedBatches: number;
  /** Input bytes consumed (compressed for gzip) and the total, when every input is a file. */
  bytesRead: number;
  bytesTotal: number | undefined;
  elapsedMs: number;
  inFlight: number;
}

export type ReplayEvent =
  | { type: 'node-down'; node: string; error: string; untilMs: number }
  | { type: 'node-up'; node: string }
  | { type: 'batch-failed'; node: string; source: string; firstRecord: number; lastRecord: number; error: string }
  | { type: 'rejected'; entry: RejectEntry }
  | { type: 'warning'; message: string }
  | { type: 'input'; name: string; format: RecordFormat; resumedAt?: Position; seeked?: boolean };

export interface NodeReport {
  node: string;
  batches: number;
  records: number;
  /** Of `records`: acknowledged by the node's own count (`{"records": N}`), and by a 2xx that carried no count. */
  ackedByCount: number;
  ackedBare: number;
  failedBatches: number;
  failedRecords: number;
  /** Records this node refused with a 400. */
  rejected: number;
  /** Request body bytes sent to this node, resends included (headers not counted). */
  bytesSent: number;
  lastError?: string;
  /** The client's code for that error (`unreachable`, `timeout`, `http`, `bad_answer`, ...), `failed` for anything else. */
  lastErrorCode?: string;
}

export interface InputReport {
  name: string;
  format: RecordFormat;
  read: number;
  /** Records skipped because the saved state says they were done. */
  skipped: number;
  resumedAt?: Position;
  position: Position;
}

/**
 * Why the run ended: `done` (every input read to its end), `strict` (invalid records, nothing sent),
 * `max-errors`, `interrupted` (signal), `input-error` (an input unreadable part-way), `nodes-down`
 * (a batch failed on every node: the run stops rather than pour the rest of the input into the
 * rejects file; resume once the nodes are back).
 */
export type StopReason = 'done' | 'strict' | 'max-errors' | 'interrupted' | 'input-error' | 'nodes-down';

export interface ReplayResult {
  stopped: StopReason;
  read: number;
  /** Records acknowledged; with `--to all`, by every node. */
  written: number;
  /**
   * `--to all`: records acknowledged by some nodes but not by every node; `--to owners`: by some
   * of their owners but not all (0 for `--to any`). `written` is then by every node / every owner.
   */
  writtenToSome: number;
  /** Record acknowledgements (per node with `--to all`): by the node's count, and by a bare 2xx without one. */
  acknowledged: { byCount: number; bare: number };
  /**
   * `--to owners`: records from rejects-file lines that name the owner they are owed to, sent to
   * that node alone (their other owners took them before); `written` counts them once it acknowledged.
   */
  toNamedOwner: number;
  /**
   * A resumed run: what the earlier run(s) settled before the saved position (written, and in the
   * rejects file). This run's own counts do not include it; the exit code does.
   */
  earlier?: SettledCounts;
  rejected: number;
  /** Of `rejected`: records a node refused (400), and records of batches that failed after retries. */
  rejectedByNode: number;
  failedRecords: number;
  batches: number;
  failedBatches: number;
  retries: number;
  bytes: number;
  seconds: number;
  rejectsPath: string | undefined;
  statePath: string | undefined;
  /** Set when the input itself was unreadable or malformed part-way. */
  inputError?: Error;
  nodes: NodeReport[];
  inputs: InputReport[];
  dryRun: boolean;
}

/** A replay that cannot start: bad options, or an input or state that does not allow it. */
export class ReplayUsageError extends Error {
  readonly code = 'usage';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ReplayUsageError';
  }
}

/**
 * Cuts a rejects file back to its last newline. A run killed while appending a line leaves it
 * torn; the next line appended would be glued to it (neither would parse). The record whose line
 * it was lies past the saved position (a reject is written before its batch counts as done), so
 * the resumed run writes it again, whole.
 */
function dropTornTail(path: string): void {
  // Never through a link planted at the path (see private-file.ts).
  const fd = openSync(path, constants.O_RDWR | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const from = Math.max(0, end - buf.length);
      readSync(fd, buf, 0, end - from, from);
      const nl = buf.subarray(0, end - from).lastIndexOf(0x0a);
      if (nl >= 0) {
        end = from + nl + 1;
        break;
      }
      end = from;
    }
    if (end < size) ftruncateSync(fd, end);
  } finally {
    closeSync(fd);
  }
}

/** Appends reject lines synchronously, so a line is in the file before the batch around it counts as done. */
class RejectsFile {
  private fd: number | undefined;
  count = 0;
  /** On resume: the records already in the file (rejected past the saved point before the stop), not written twice. */
  private readonly seen = new Set<string>();
  constructor(
    readonly path: string | undefined,
    private readonly append: boolean,
  ) {}
  private static key(file: unknown, record: unknown, node: unknown): string {
    return `${String(file)}\u0000${String(record)}\u0000${String(node ?? '')}`;
  }
  /** Remembers what an existing rejects file already holds (resume appends to it). */
  async loadExisting(): Promise<void> {
    if (this.path === undefined || !this.append) return;
    let info;
    try {
      info = await statSource(this.path);
    } catch {
      return; // no file yet
    }
    if (info.stdin || info.size === undefined || info.size === 0) return;
    dropTornTail(this.path);
    const handle = await openRecords(info, { format: 'ndjson' });
    for await (const group of handle.groups) {
      for (const raw of group) {
        try {
          const v = JSON.parse(raw.text) as Record<string, unknown>;
          this.seen.add(RejectsFile.key(v.file, v.record, v.node));
        } catch {
          // a torn last line from a killed run: ignore
        }
      }
    }
  }
  write(entry: RejectEntry & { owner?: string }): void {
    this.count++;
    if (this.path === undefined) return;
    if (this.seen.size > 0 && this.seen.has(RejectsFile.key(entry.file, entry.record, entry.node))) return;
    if (this.fd === undefined) this.fd = openPrivate(this.path, this.append ? 'append' : 'truncate', 'rejects file');
    const line: Record<string, unknown> = { file: entry.file, record: entry.record };
    if (entry.line !== undefined) line.line = entry.line;
    line.error = entry.error;
    if (entry.node !== undefined) line.node = entry.node;
    // `--to owners`: the ring node this copy is owed to; a replay of the line sends it there alone.
    if (entry.owner !== undefined) line.owner = entry.owner;
    let text: string;
    if (entry.inputText !== undefined) {
      // Verbatim, on one line: in valid JSON a CR or LF can only be whitespace between tokens.
      text = `${JSON.stringify(line).slice(0, -1)},"input":${entry.inputText.replace(/[\r\n]+/g, ' ').trim()}}`;
    } else {
      line.input = entry.input;
      text = JSON.stringify(line);
    }
    writeSync(this.fd, `${text}\n`);
  }
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Whether `path` is a symbolic link (a missing path is not). */
function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Token bucket on records per second, burst of one batch. */
class RateLimiter {
  private nextFree = 0;
  constructor(
    private readonly rate: number,
    private readonly now: () => number,
  ) {}
  async take(n: number, signal?: AbortSignal): Promise<void> {
    const t = Math.max(this.now(), this.nextFree);
    this.nextFree = t + (n / this.rate) * 1000;
    const wait = t - this.now();
    if (wait > 0) await sleep(wait, undefined, signal ? { signal } : undefined);
  }
}

/** Round-robin over healthy nodes; a node that failed is skipped for a while, then tried again. */
class NodePool {
  private cursor = 0;
  private readonly downUntil: number[];
  constructor(
    readonly clients: readonly NodeClient[],
    private readonly now: () => number,
    private readonly unhealthyMs: number,
    private readonly onEvent: (e: ReplayEvent) => void,
  ) {
    this.downUntil = clients.map(() => 0);
  }
  /** The next node to try for a batch that has already been refused by `tried`; undefined when every node was tried. */
  pick(tried: ReadonlySet<number>): number | undefined {
    const n = this.clients.length;
    const t = this.now();
    let fallback: number | undefined;
    for (let k = 0; k < n; k++) {
      const i = (this.cursor + k) % n;
      if (tried.has(i)) continue;
      if (this.downUntil[i]! <= t) {
        this.cursor = (i + 1) % n;
        return i;
      }
      if (fallback === undefined || this.downUntil[i]! < this.downUntil[fallback]!) fallback = i;
    }
    return fallback;
  }
  /** Whether node i failed within the last `unhealthyMs` (and since then has not taken a batch). */
  isDown(i: number): boolean {
    return this.downUntil[i]! > this.now();
  }
  down(i: number, error: string): void {
    const until = this.now() + this.unhealthyMs;
    if (this.downUntil[i]! <= this.now()) this.onEvent({ type: 'node-down', node: this.clients[i]!.url, error, untilMs: until });
    this.downUntil[i] = until;
  }
  up(i: number): void {
    if (this.downUntil[i]! > 0) {
      this.downUntil[i] = 0;
      this.onEvent({ type: 'node-up', node: this.clients[i]!.url });
    }
  }
}

/**
 * A node acknowledged a number of records other than the batch held. Writes are atomic and a
 * resend replaces, so the batch is sent again; if the count stays wrong it is not written.
 */
export class AckCountError extends NodeRequestError {
  constructor(
    node: string,
    readonly acknowledged: number,
    readonly sent: number,
  ) {
    super(
      node,
      'bad_answer',
      acknowledged < sent ? `acknowledged ${acknowledged} of the ${sent} records sent (a short acknowledgement)` : `acknowledged ${acknowledged} records for the ${sent} sent`,
      { retryable: true, hint: "the node's count does not match the request: check the node, or a proxy in front of it" },
    );
    this.name = 'AckCountError';
  }
}

/** Which record of a batch a node's 400 names (0-based), when it names one. */
export function rejectedIndex(err: NodeHttpError, count: number): number | undefined {
  const body = err.body ?? {};
  for (const key of ['index', 'record', 'recordIndex', 'record_index']) {
    const v = body[key];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < count) return v;
  }
  const m = /record(?:s)?\s*(?:\[|#|index\s*)?\s*(\d+)\]?/i.exec(typeof body.error === 'string' ? body.error : err.message) ?? /^\[(\d+)\]/.exec(String(body.error ?? ''));
  if (m) {
    const v = Number(m[1]);
    if (v < count) return v;
  }
  return undefined;
}

function nodeReason(err: NodeHttpError): string {
  const body = err.body ?? {};
  const field = typeof body.field === 'string' ? body.field : undefined;
  const reason = typeof body.reason === 'string' ? body.reason : undefined;
  if (field && reason) return `${field}: ${reason}`;
  return typeof body.error === 'string' ? body.error : err.detail;
}

/** Part of a batch on its way to one node: the body, and its texts once a refusal made them necessary. */
interface Slice {
  body: Buffer;
  count: number;
  records: number[];
  lines: number[];
  texts?: string[];
}

function textsOf(s: Slice): string[] {
  s.texts ??= batchTexts(s.body);
  return s.texts;
}

function sliceOf(texts: string[], records: number[], lines: number[]): Slice {
  return { body: batchBody(texts), count: texts.length, records, lines, texts };
}

/** The slice without the records numbered in `gone`. */
function excluding(s: Slice, gone: ReadonlySet<number>): Slice {
  const keep = s.records.flatMap((r, k) => (gone.has(r) ? [] : [k]));
  const t = textsOf(s);
  return sliceOf(keep.map((k) => t[k]!), keep.map((k) => s.records[k]!), keep.map((k) => s.lines[k]!));
}

function half(s: Slice, from: number, to: number): Slice {
  return sliceOf(textsOf(s).slice(from, to), s.records.slice(from, to), s.lines.slice(from, to));
}

/**
 * Replays record files (numeric, text or histogram: `kind`) into nodes: streams each input, validates every record, sends
 * batches with bounded concurrency, puts invalid or refused records in the rejects file, and
 * saves the acknowledged position so a killed run can resume without losing a record.
 */
export async function writeRecords(sources: readonly string[], options: ReplayOptions): Promise<ReplayResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const to = options.to ?? 'any';
  const batchSize = options.batchSize ?? 5000;
  const batchBytes = options.batchBytes ?? 4 * 1024 * 1024;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const dryRun = options.dryRun ?? false;
  const kind = options.kind ?? 'nnt';
  const write = writerFor(kind);
  const emit = options.onEvent ?? (() => undefined);
  const signal = options.signal;
  if (sources.length === 0) throw new ReplayUsageError('no input files', 'name one or more record files, or - for standard input');
  if (options.clients.length === 0 && !dryRun) throw new ReplayUsageError('no nodes to write to');
  if (sources.filter((s) => s === '-').length > 1) throw new ReplayUsageError('standard input (-) is named more than once');
  const infos: SourceInfo[] = [];
  for (const s of sources) infos.push(await statSource(s));
  if (options.strict && infos.some((i) => i.stdin)) {
    throw new ReplayUsageError('--strict reads every input twice, and standard input can be read only once', 'save the records to a file first, or drop --strict');
  }
  if (options.rate !== undefined && !(options.rate > 0)) throw new ReplayUsageError(`rate: ${options.rate} must be > 0 records/s`);
  if (to === 'owners') {
    if (options.ring === undefined) throw new ReplayUsageError('to owners: no ring given', 'pass the ring the nodes run (discoverRing(seed).ring), or write with to any or all');
    const ringNodes = options.ring.topology.nodes.length;
    if (options.clients.length !== ringNodes) {
      throw new ReplayUsageError(`to owners: ${options.clients.length} clients for a ring of ${ringNodes} nodes`, 'one client per ring node, in topology order');
    }
  }
  const router = to === 'owners' ? new OwnerRouter(options.ring!) : undefined;
  if (!dryRun) {
    // Refused before anything is sent; the opens themselves refuse links too (O_NOFOLLOW, rename), should one appear later.
    for (const [what, path] of [['rejects file', options.rejectsPath], ['state file', options.statePath]] as const) {
      if (path !== undefined && isSymlink(path)) {
        throw new ReplayUsageError(`${what} ${path} is a symbolic link: refusing to write through it`, `remove it, or name another path with --${what === 'state file' ? 'state' : 'rejects'}`);
      }
    }
  }

  // Saved position per input.
  const statePath = dryRun ? undefined : options.statePath;
  let saved: ReplayState | undefined;
  if (statePath !== undefined && !options.resume && existsSync(statePath)) {
    emit({ type: 'warning', message: `${statePath} holds the position of an earlier run; starting over (pass --resume to continue it instead)` });
    // Forget it now, not at this run's first acknowledgement: this run starts a new rejects file,
    // and a --resume after it dies before that must not skip to the old position (whose rejects are gone).
    removeState(statePath);
  }
  if (statePath !== undefined && options.resume) {
    saved = loadState(statePath);
    if (saved === undefined) emit({ type: 'warning', message: `no state file at ${statePath}: starting from the beginning` });
    else checkSavedKind(statePath, saved, kind);
  }
  const starts = new Map<string, { pos: Position; format: RecordFormat; done: boolean; settled: SettledCounts }>();
  let earlier: SettledCounts | undefined;
  if (saved) {
    earlier = noCounts();
    for (const info of infos) {
      const s = saved.inputs[info.name];
      if (!s) continue;
      // `force` is the old name of allowChangedInput, still honoured for library callers.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      const warning = checkInput(s, info, options.allowChangedInput ?? options.force ?? false);
      if (warning) emit({ type: 'warning', message: warning });
      checkPosition(s, info);
      const settled = { ...noCounts(), ...s.settled };
      addCounts(earlier, settled);
      starts.set(info.name, { pos: { record: s.record, byte: s.byte, line: s.line }, format: s.format, done: s.done, settled });
    }
    for (const name of Object.keys(saved.inputs)) {
      if (!infos.some((i) => i.name === name)) emit({ type: 'warning', message: `the state file also lists ${name}, which is not an input of this run` });
    }
  }

  const rejects = new RejectsFile(dryRun ? undefined : options.rejectsPath, Boolean(saved));
  await rejects.loadExisting();
  const limiter = options.rate !== undefined && !dryRun ? new RateLimiter(options.rate, now) : undefined;
  const unhealthyMs = options.unhealthyMs ?? 10_000;
  const pool = new NodePool(options.clients, now, unhealthyMs, emit);
  const nodes: NodeReport[] = options.clients.map((c) => ({ node: c.url, batches: 0, records: 0, ackedByCount: 0, ackedBare: 0, failedBatches: 0, failedRecords: 0, rejected: 0, bytesSent: 0 }));
  const counters = { read: 0, written: 0, writtenToSome: 0, batches: 0, failedBatches: 0, failedRecords: 0, retries: 0, rejectedByNode: 0, toNamedOwner: 0 };
  const ackRetry = options.ackRetry ?? DEFAULT_RETRY;
  const inputs: InputReport[] = [];
  const bytesTotal = infos.every((i) => i.size !== undefined) ? infos.reduce((a, i) => a + (i.size ?? 0), 0) : undefined;
  let bytesDone = 0;
  let currentBytes = (): number => 0;
  let inFlight = 0;
  let stop: StopReason | undefined;
  let inputError: Error | undefined;
  const stopped = (): boolean => stop !== undefined || Boolean(signal?.aborted);

  const progress = (): ReplayProgress => ({
    read: counters.read,
    written: counters.written,
    rejected: rejects.count,
    batches: counters.batches,
    retries: counters.retries,
    failedBatches: counters.failedBatches,
    bytesRead: bytesDone + currentBytes(),
    bytesTotal,
    elapsedMs: now() - started,
    inFlight: ownerQueue ? ownerQueue.requests : inFlight,
  });

  const reject = (entry: RejectEntry & { owner?: string }): void => {
    rejects.write(entry);
    emit({ type: 'rejected', entry });
    if (options.maxErrors !== undefined && rejects.count > options.maxErrors && stop === undefined) stop = 'max-errors';
  };

  // ---- state
  const state: ReplayState = {
    version: 1,
    updated: new Date(now()).toISOString(),
    rejects: options.rejectsPath ?? '',
    kind,
    inputs: saved ? { ...saved.inputs } : {},
  };
  let lastSave = 0;
  const persist = (force: boolean): void => {
    if (statePath === undefined) return;
    const t = now();
    if (!force && t - lastSave < (options.stateIntervalMs ?? 1000)) return;
    lastSave = t;
    state.updated = new Date(t).toISOString();
    saveState(statePath, state);
  };

  // ---- sending
  const onRetry = (): void => {
    counters.retries++;
  };

  /** What became of one batch's records: counted into the acknowledged prefix (see LowWater). */
  interface Tally {
    refused: number;
    notWritten: number;
  }
  /** Records a node acknowledged in one sendTo call, and how. */
  interface Sent {
    written: number;
    byCount: number;
    bare: number;
  }
  const sentNothing = (): Sent => ({ written: 0, byCount: 0, bare: 0 });

  /**
   * One request: the slice to node i, acknowledged for every record it held. A 2xx without a
   * count acknowledges the whole slice (the production store answers an empty 200); a count that
   * differs is resent (the rewrite replaces) and, if it stays wrong, throws AckCountError.
   */
  const writeAcknowledged = async (i: number, slice: Slice): Promise<'count' | 'bare'> => {
    const client = options.clients[i]!;
    for (let attempt = 0; ; attempt++) {
      // Counted per request sent, the client's own retries included.
      const onSent = (): void => {
        nodes[i]!.bytesSent += slice.body.length;
      };
      onSent();
      const ack = await write(client, slice.body, {
        method: options.method ?? 'POST',
        ...(signal ? { signal } : {}),
        onRetry: () => {
          onRetry();
          onSent();
        },
      });
      if (ack.records === undefined) return 'bare';
      if (ack.records === slice.count) return 'count';
      const err = new AckCountError(client.url, ack.records, slice.count);
      if (attempt >= ackRetry.retries || signal?.aborted) throw err;
      counters.retries++;
      try {
        await sleep(backoffDelay(ackRetry, attempt, err), undefined, signal ? { signal } : undefined);
      } catch {
        throw err; // interrupted while waiting
      }
    }
  };

  /**
   * Sends one slice to one node, handling 400 (drop the named record, resend the rest) and 413
   * (halve). Returns what was acknowledged or throws the error that made the node fail. Every
   * record it puts in the rejects file is added to `refused`, so a resend elsewhere leaves it out.
   */
  const sendTo = async (i: number, slice: Slice, source: string, refused: Set<number>, tally: Tally): Promise<Sent> => {
    const client = options.clients[i]!;
    let current = slice;
    const sent = sentNothing();
    const refuse = (k: number, error: string, s: Slice): void => {
      reject({ file: source, record: s.records[k]!, line: s.lines[k]!, error, ...rejectInput(textsOf(s)[k]!), node: client.url, ...owedBy(i) });
      refused.add(s.records[k]!);
      counters.rejectedByNode++;
      nodes[i]!.rejected++;
      tally.refused++;
    };
    while (current.count > 0) {
      try {
        const how = await writeAcknowledged(i, current);
        sent.written += current.count;
        if (how === 'count') sent.byCount += current.count;
        else sent.bare += current.count;
        return sent;
      } catch (err) {
        if (err instanceof NodeHttpError && err.status === 400) {
          const idx = rejectedIndex(err, current.count);
          const reason = nodeReason(err);
          if (idx === undefined) {
            // The node refused the batch without saying which record: none of it is stored (writes are atomic).
            const all = current;
            for (let k = 0; k < all.count; k++) refuse(k, `node: ${reason}`, all);
            return sent;
          }
          refuse(idx, reason, current);
          current = excluding(current, refused);
          continue;
        }
        if (err instanceof NodeHttpError && err.status === 413 && current.count === 1) {
          // One record larger than the node's body limit: that record is refused, not the node broken.
          refuse(0, `(record): larger than the node accepts: ${nodeReason(err)}`, current);
          return sent;
        }
        if (err instanceof NodeHttpError && err.status === 413 && current.count > 1) {
          const mid = Math.ceil(current.count / 2);
          for (const part of [half(current, 0, mid), half(current, mid, current.count)]) {
            const more = await sendTo(i, part, source, refused, tally);
            sent.written += more.written;
            sent.byCount += more.byCount;
            sent.bare += more.bare;
          }
          return sent;
        }
        throw err;
      }
    }
    return sent;
  };

  /** A batch that failed on node i: every record of it not already refused goes to the rejects file. */
  const failBatch = (batch: Batch, i: number, err: unknown, refused: ReadonlySet<number>, tally: Tally): void => {
    const message = err instanceof Error ? err.message : String(err);
    const n = batch.count - refused.size;
    counters.failedBatches++;
    counters.failedRecords += n;
    nodes[i]!.failedBatches++;
    nodes[i]!.failedRecords += n;
    nodes[i]!.lastError = message;
    nodes[i]!.lastErrorCode = err instanceof NodeRequestError ? err.code : 'failed';
    tally.notWritten += n;
    emit({ type: 'batch-failed', node: options.clients[i]!.url, source: batch.source, firstRecord: batch.records[0]!, lastRecord: batch.records[n - 1]!, error: message });
    batchTexts(batch.body).forEach((t, k) => {
      if (refused.has(batch.records[k]!)) return;
      reject({ file: batch.source, record: batch.records[k]!, line: batch.lines[k]!, error: `not written: ${message}`, ...rejectInput(t), node: options.clients[i]!.url });
    });
  };

  /** `--to owners`: a reject names the ring node the copy is owed to, so a replay of the line goes there alone. */
  const owedBy = (i: number): { owner?: string } => (router ? { owner: router.ring.topology.nodes[i]!.id } : {});

  /**
   * `--to owners`: a slice its owner did not take (failed after retries, or not tried while the
   * node is down): every record of it the node did not refuse goes to the rejects file, naming
   * the node. Never to another node: it does not own them.
   */
  const failSlice = (source: string, s: OwnerSlice, err: unknown, refused: ReadonlySet<number>, tally: Tally): void => {
    const i = s.node;
    const message = err instanceof Error ? err.message : String(err);
    const n = s.count - refused.size;
    counters.failedBatches++;
    counters.failedRecords += n;
    nodes[i]!.failedBatches++;
    nodes[i]!.failedRecords += n;
    nodes[i]!.lastError = message;
    nodes[i]!.lastErrorCode = err instanceof NodeRequestError ? err.code : 'failed';
    tally.notWritten += n;
    const kept = s.records.flatMap((r, j) => (refused.has(r) ? [] : [j]));
    if (kept.length === 0) return;
    emit({ type: 'batch-failed', node: options.clients[i]!.url, source, firstRecord: s.records[kept[0]!]!, lastRecord: s.records[kept[kept.length - 1]!]!, error: message });
    const texts = textsOf(s);
    for (const j of kept) {
      reject({ file: source, record: s.records[j]!, line: s.lines[j]!, error: `not written: ${message}`, ...rejectInput(texts[j]!), node: options.clients[i]!.url, ...owedBy(i) });
    }
  };

  let notOwedWarned = false;
  /** Why each node last failed a request (what a request not tried while it is down quotes). */
  const downWhy: string[] = [];

  /** `--to owners`: one input batch on its way, split among its owners' queues; settled when every slice is. */
  interface Chunk {
    source: string;
    routed: RoutedBatch;
    /** Per record of the batch: the owners that acknowledged it. */
    acked: Uint8Array;
    /** Slices not settled yet. */
    pending: number;
    failed: number;
    interrupted: boolean;
    tally: Tally;
    done: (outcome: Omit<SettledCounts, 'invalid'> | undefined) => void;
  }

  /**
   * A chunk all of whose slices are settled. A record counts as written when every one of its
   * owners acknowledged it, as written to some when only some did.
   */
  const settleChunk = (c: Chunk): void => {
    if (c.interrupted) { c.done(undefined); return; }
    // Every owner of every record in it failed: stop reading (see StopReason).
    if (c.routed.slices.length > 0 && c.failed === c.routed.slices.length) stop ??= 'nodes-down';
    counters.batches++;
    let everywhere = 0;
    let somewhere = 0;
    for (let k = 0; k < c.acked.length; k++) {
      if (c.routed.copies[k] === 0) continue;
      if (c.acked[k] === c.routed.copies[k]) everywhere++;
      else if (c.acked[k]! > 0) somewhere++;
    }
    counters.written += everywhere;
    counters.writtenToSome += somewhere;
    c.done({ written: everywhere, writtenToSome: somewhere, ...c.tally });
  };

  /**
   * `--to owners`: one request to node i holding slices of one or more input batches. What the
   * node refuses or does not take goes to the rejects file naming it (never to another node);
   * each batch gets its share of the outcome.
   */
  const sendOwnerRequest = async (i: number, parts: QueuedSlice<Chunk>[]): Promise<void> => {
    const request = joinSlices(i, parts.map((p) => p.slice));
    const source = parts[0]!.owner.source;
    const refused = new Set<number>();
    // sendTo and failSlice count into a tally; each batch's share is worked out below instead.
    const scratch: Tally = { refused: 0, notWritten: 0 };
    let failed = false;
    let interrupted = false;
    inFlight++;
    try {
      if (pool.isDown(i)) {
        // It failed moments ago: its records go to the rejects file now rather than each request waiting out the retries.
        failSlice(source, request, new Error(`${options.clients[i]!.url} failed a write within the last ${Math.round(unhealthyMs / 1000)}s and was not tried again yet (${downWhy[i] ?? 'it failed'})`), refused, scratch);
        failed = true;
      } else {
        try {
          const sent = await sendTo(i, request, source, refused, scratch);
          pool.up(i);
          credit(i, sent);
        } catch (err) {
          if (signal?.aborted) interrupted = true;
          else {
            if (err instanceof NodeRequestError) {
              pool.down(i, err.detail);
              downWhy[i] = err.detail;
            }
            failSlice(source, request, err, refused, scratch);
            failed = true;
          }
        }
      }
    } catch (err) {
      // Not a node's failure (the rejects file unwritable): the batches stay unacknowledged and the run stops.
      inputError ??= err instanceof Error ? err : new Error(String(err));
      stop ??= 'input-error';
      interrupted = true;
    } finally {
      inFlight--;
    }
    for (const { owner: c, slice } of parts) {
      slice.records.forEach((r, j) => {
        if (refused.has(r)) c.tally.refused++;
        else if (failed) c.tally.notWritten++;
        else if (!interrupted) c.acked[slice.index[j]!]!++;
      });
      if (failed) c.failed++;
      if (interrupted) c.interrupted = true;
      if (--c.pending === 0) settleChunk(c);
    }
  };
  const ownerQueue = router
    ? new OwnerQueue<Chunk>({
        nodes: options.clients.length,
        batchSize,
        batchBytes,
        perNode: concurrency,
        budget: batchBytes * Math.max(2, concurrency) * 2,
        send: sendOwnerRequest,
      })
    : undefined;

  /** Counts a node's acknowledgement of (part of) a batch into its report. */
  const credit = (i: number, sent: Sent): void => {
    nodes[i]!.batches++;
    nodes[i]!.records += sent.written;
    nodes[i]!.ackedByCount += sent.byCount;
    nodes[i]!.ackedBare += sent.bare;
  };

  /**
   * Sends a batch; resolves to what became of it once it is settled (written, rejected or failed
   * into the rejects file), or undefined when interrupted.
   */
  const sendBatch = async (batch: Batch): Promise<Omit<SettledCounts, 'invalid'> | undefined> => {
    const tally: Tally = { refused: 0, notWritten: 0 };
    if (batch.count === 0) return { written: 0, writtenToSome: 0, ...tally };
    const slice: Slice = { body: batch.body, count: batch.count, records: batch.records, lines: batch.lines };
    if (to === 'all') {
      const results = await Promise.all(
        options.clients.map(async (_, i): Promise<number | 'failed' | 'interrupted'> => {
          // Each node refuses for itself: its rejects are its own.
          const refused = new Set<number>();
          try {
            const sent = await sendTo(i, slice, batch.source, refused, tally);
            credit(i, sent);
            return sent.written;
          } catch (err) {
            if (signal?.aborted) return 'interrupted';
            failBatch(batch, i, err, refused, tally);
            return 'failed';
          }
        }),
      );
      if (results.includes('interrupted')) return undefined;
      // This batch failed on every node: stop reading (see StopReason).
      if (results.every((w) => w === 'failed')) stop ??= 'nodes-down';
      counters.batches++;
      // Written means written everywhere: the least any node took; the rest of what some took is "to some".
      const took = results.map((w) => (typeof w === 'number' ? w : 0));
      const everywhere = Math.min(...took);
      const somewhere = Math.max(...took) - everywhere;
      counters.written += everywhere;
      counters.writtenToSome += somewhere;
      return { written: everywhere, writtenToSome: somewhere, ...tally };
    }
    const tried = new Set<number>();
    // What a node refused (400) is in the rejects file: the next node gets the rest only.
    const refused = new Set<number>();
    let lastErr: unknown;
    let lastNode = 0;
    for (;;) {
      const i = pool.pick(tried);
      if (i === undefined) break;
      tried.add(i);
      try {
        const sent = await sendTo(i, refused.size === 0 ? slice : excluding(slice, refused), batch.source, refused, tally);
        pool.up(i);
        credit(i, sent);
        counters.batches++;
        counters.written += sent.written;
        return { written: sent.written, writtenToSome: 0, ...tally };
      } catch (err) {
        if (signal?.aborted) return undefined;
        lastErr = err;
        lastNode = i;
        // A node that cannot take a batch after its retries is left alone for a while; the batch moves on.
        if (err instanceof NodeRequestError) pool.down(i, err.detail);
      }
    }
    failBatch(batch, lastNode, lastErr, refused, tally);
    stop ??= 'nodes-down';
    return { written: 0, writtenToSome: 0, ...tally };
  };

  // ---- the pipeline: read -> validate -> batch -> at most `concurrency` batches in flight
  const running = new Set<Promise<void>>();
  const bodies = new BodyPool(concurrency + 2);
  const dryCounts = options.clients.map(() => 0);
  let dryCursor = 0;
  /** `invalid`: records the local check rejected that this batch's position moves past. */
  const dispatch = async (batch: Batch, water: LowWater, onAck: () => void, invalid: number): Promise<void> => {
    if (dryRun) {
      if (batch.count > 0) {
        counters.batches++;
        if (to === 'all') options.clients.forEach((_, k) => {
          dryCounts[k]! += batch.count;
          nodes[k]!.batches++;
        });
        else if (router) {
          for (const s of router.split(batch).slices) {
            dryCounts[s.node]! += s.count;
            nodes[s.node]!.batches++;
          }
        } else if (options.clients.length > 0) {
          dryCounts[dryCursor]! += batch.count;
          nodes[dryCursor]!.batches++;
          dryCursor = (dryCursor + 1) % options.clients.length;
        }
      }
      water.ack(batch.seq, batch.end);
      bodies.give(batch.body);
      return;
    }
    if (ownerQueue) return dispatchToOwners(batch, water, onAck, invalid);
    while (running.size >= concurrency) await Promise.race(running);
    // Nodes all failing or a signal: this batch stays unsent and unacknowledged (a resume sends it).
    if (signal?.aborted || stop === 'nodes-down') return;
    if (limiter && batch.count > 0) {
      try {
        await limiter.take(batch.count, signal);
      } catch {
        return; // interrupted while waiting
      }
    }
    inFlight++;
    const failed = (err: unknown): void => {
      // An unexpected failure (not a node error; the rejects or state file unwritable): keep the batch unacknowledged and stop.
      inputError ??= err instanceof Error ? err : new Error(String(err));
      stop ??= 'input-error';
    };
    const p = sendBatch(batch).then(
      (outcome) => {
        inFlight--;
        running.delete(p);
        if (!outcome) return;
        // Every request with this body has finished (retries included): its buffer can carry another batch.
        bodies.give(batch.body);
        try {
          if (water.ack(batch.seq, batch.end, { ...outcome, invalid })) onAck();
        } catch (err) {
          failed(err);
        }
        options.onProgress?.(progress());
      },
      (err: unknown) => {
        inFlight--;
        running.delete(p);
        failed(err);
      },
    );
    running.add(p);
  };

  /**
   * `--to owners`: the batch split among its owners' queues (which send full requests, and make
   * this wait while a node has no free request slot); acknowledged once every slice is settled.
   */
  const dispatchToOwners = async (batch: Batch, water: LowWater, onAck: () => void, invalid: number): Promise<void> => {
    if (signal?.aborted || stop === 'nodes-down') return;
    if (limiter && batch.count > 0) {
      try {
        await limiter.take(batch.count, signal);
      } catch {
        return; // interrupted while waiting
      }
    }
    const routed = router!.split(batch);
    // The slices hold copies of their records: the batch's buffer can carry the next batch now.
    bodies.give(batch.body);
    counters.toNamedOwner += routed.owed;
    if (routed.notOwedThere > 0 && !notOwedWarned) {
      notOwedWarned = true;
      emit({
        type: 'warning',
        message: `${routed.notOwedThere} record(s) from a rejects file name an owner that does not own them on ring ${router!.ring.hash.slice(0, 12)} (the ring changed?): sent to all of their owners instead (further ones likewise)`,
      });
    }
    let done!: Chunk['done'];
    const settled = new Promise<Omit<SettledCounts, 'invalid'> | undefined>((resolve) => (done = resolve));
    const chunk: Chunk = { source: batch.source, routed, acked: new Uint8Array(batch.count), pending: routed.slices.length, failed: 0, interrupted: false, tally: { refused: 0, notWritten: 0 }, done };
    const p: Promise<void> = settled.then((outcome) => {
      running.delete(p);
      if (!outcome) return;
      try {
        if (water.ack(batch.seq, batch.end, { ...outcome, invalid })) onAck();
      } catch (err) {
        inputError ??= err instanceof Error ? err : new Error(String(err));
        stop ??= 'input-error';
      }
      options.onProgress?.(progress());
    });
    running.add(p);
    if (routed.slices.length === 0) settleChunk(chunk);
    else await ownerQueue!.add(chunk, routed.slices);
  };

  /** `--to owners`, at the end of an input: what the queues hold is sent, or (interrupted, nodes down) dropped unacknowledged. */
  const drainOwners = async (): Promise<void> => {
    if (!ownerQueue) return;
    if (!signal?.aborted && stop !== 'nodes-down') return ownerQueue.flushAll();
    for (const { owner: c } of await ownerQueue.drop()) {
      c.interrupted = true;
      if (--c.pending === 0) settleChunk(c);
    }
  };

  const runPass = async (send: boolean): Promise<void> => {
    for (const info of infos) {
      if (stopped()) break;
      const resumed = send ? starts.get(info.name) : undefined;
      if (resumed?.done) {
        inputs.push({ name: info.name, format: resumed.format, read: 0, skipped: resumed.pos.record, resumedAt: resumed.pos, position: resumed.pos });
        bytesDone += info.size ?? 0;
        continue;
      }
      const format = resumed?.format ?? options.format ?? 'auto';
      const handle = await openRecords(info, { format, ...(resumed ? { start: resumed.pos } : {}), ...(options.stdin ? { stdin: options.stdin } : {}), ...(signal ? { signal } : {}) });
      currentBytes = () => handle.bytesRead();
      emit({ type: 'input', name: info.name, format: handle.format, ...(resumed ? { resumedAt: resumed.pos, seeked: handle.seeked } : {}) });
      const start = resumed?.pos ?? { record: 0, byte: 0, line: 1 };
      const batcher = new Batcher({
        source: info.name,
        batchSize,
        batchBytes,
        pool: bodies,
        kind,
        ...(options.smallestSpan !== undefined ? { smallestSpan: options.smallestSpan } : {}),
        ...(options.histogramPeriods !== undefined ? { histogramPeriods: options.histogramPeriods } : {}),
        start,
      });
      // The counts carried from the earlier run(s) keep adding up in the state file.
      const water = new LowWater(start, resumed?.settled);
      const report: InputReport = { name: info.name, format: handle.format, read: 0, skipped: start.record, position: start, ...(resumed ? { resumedAt: resumed.pos } : {}) };
      inputs.push(report);
      const entry = {
        format: handle.format,
        size: info.size ?? null,
        mtimeMs: info.mtimeMs ?? null,
        gzip: info.gzip,
        done: false,
        ...start,
      };
      const onAck = (): void => {
        Object.assign(entry, water.position);
        report.position = water.position;
        if (send) {
          state.inputs[info.name] = { ...entry, settled: { ...water.settled } };
          persist(false);
        }
      };
      if (send) state.inputs[info.name] = { ...entry, settled: { ...water.settled } };
      // Invalid records since the last batch: the next batch's position moves past them.
      let invalid = 0;
      const take = (): number => {
        const n = invalid;
        invalid = 0;
        return n;
      };
      try {
        outer: for await (const group of handle.groups) {
          for (const raw of group) {
            counters.read++;
            report.read++;
            const added = batcher.add(raw);
            if (added.kind === 'reject') {
              invalid++;
              reject(added.reject);
            }
            if (added.full && send) await dispatch(added.full, water, onAck, take());
            if (stopped()) break outer;
          }
        }
      } catch (err) {
        inputError = err as Error;
        stop ??= 'input-error';
      }
      // What was validated still goes (after an input error or --max-errors too: those records were fine); only an interrupt drops it.
      if (send && !signal?.aborted) {
        const last = batcher.flush();
        await dispatch(last, water, onAck, take());
      }
      if (send) await drainOwners();
      await Promise.all(running);
      bytesDone += handle.bytesRead();
      currentBytes = () => 0;
      if (send) {
        const complete = stop === undefined && !signal?.aborted;
        entry.done = complete;
        Object.assign(entry, water.position);
        report.position = water.position;
        state.inputs[info.name] = { ...entry, settled: { ...water.settled } };
        try {
          persist(true);
        } catch (err) {
          inputError ??= err as Error;
          stop ??= 'input-error';
        }
      }
    }
  };

  try {
    if (options.strict) {
      await runPass(false);
      if (inputError === undefined && rejects.count > 0 && !signal?.aborted) stop = 'strict';
      if (stop === undefined && !signal?.aborted) {
        // Second pass: everything is valid, send it.
        counters.read = 0;
        inputs.length = 0;
        bytesDone = 0;
        await runPass(true);
      }
    } else {
      await runPass(true);
    }
    await Promise.all(running);
  } finally {
    rejects.close();
  }
  if (signal?.aborted) stop = 'interrupted';
  const result: ReplayResult = {
    stopped: stop ?? 'done',
    read: counters.read,
    written: counters.written,
    writtenToSome: counters.writtenToSome,
    acknowledged: { byCount: nodes.reduce((a, n) => a + n.ackedByCount, 0), bare: nodes.reduce((a, n) => a + n.ackedBare, 0) },
    toNamedOwner: counters.toNamedOwner,
    ...(earlier ? { earlier } : {}),
    rejected: rejects.count,
    rejectedByNode: counters.rejectedByNode,
    failedRecords: counters.failedRecords,
    batches: counters.batches,
    failedBatches: counters.failedBatches,
    retries: counters.retries,
    bytes: bytesDone,
    seconds: (now() - started) / 1000,
    rejectsPath: (rejects.count > 0 || (earlier !== undefined && rejectedOf(earlier) > 0)) && !dryRun ? options.rejectsPath : undefined,
    statePath,
    ...(inputError ? { inputError } : {}),
    nodes: dryRun ? nodes.map((n, k) => ({ ...n, records: dryCounts[k]! })) : nodes,
    inputs,
    dryRun,
  };
  // A complete run, or one stopped before anything was acknowledged, leaves no state behind: a
  // later --resume would have nothing to skip.
  const progressed = Object.values(state.inputs).some((e) => e.done || e.record > 0);
  if (statePath !== undefined && (result.stopped === 'done' || !progressed)) {
    removeState(statePath);
    result.statePath = undefined;
  }
  return result;
}

