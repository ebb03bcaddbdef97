/**
 * Replays record files (numeric, text or histogram: `kind`) into nodes: streams each input,
 * validates every record, sends batches with bounded concurrency, puts invalid or refused
 * records in the rejects file, and saves the acknowledged position so a killed run can resume
 * without losing a record.
 *
 * The parts, each in its own module: the batches go out by a Route (route-any-all.ts,
 * route-owners.ts) through a NodeWriter (acknowledge.ts: one slice to one node until it is
 * acknowledged or refused); what is not written goes to the RejectsFile (rejects.ts); the
 * positions are kept by ResumeState (resume.ts); every count lands in the one Ledger (ledger.ts).
 */
import { lstatSync } from 'node:fs';
import { DEFAULT_RETRY } from '../client/retry.js';
import { Batcher, BodyPool, type Batch, type RejectEntry } from '../records/batch.js';
import { openRecordChunks, statSource, type SourceInfo } from '../records/reader.js';
import { chunkSize } from '../records/splitter.js';
import { NodeWriter, type SendContext } from './acknowledge.js';
import { ReplayUsageError } from './errors.js';
import { writerFor } from './kinds.js';
import { Ledger } from './ledger.js';
import { NodePool } from './node-pool.js';
import { RateLimiter } from './rate-limiter.js';
import { RejectsFile } from './rejects.js';
import { ResumeState, type ResumePoint } from './resume.js';
import { AnyAllRoute } from './route-any-all.js';
import { OwnersRoute } from './route-owners.js';
import type { BatchOutcome, Route } from './route.js';
import { LowWater, rejectedOf, type InputState } from './state.js';
import type { InputReport, ReplayOptions, ReplayProgress, ReplayResult } from './types.js';

export async function writeRecords(sources: readonly string[], options: ReplayOptions): Promise<ReplayResult> {
  return (await Replay.open(sources, options)).run();
}

/** Whether `path` is a symbolic link (a missing path is not). */
function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Refuses options that cannot make a run, before anything is read or sent. */
async function checkedInputs(sources: readonly string[], options: ReplayOptions): Promise<SourceInfo[]> {
  const dryRun = options.dryRun ?? false;
  if (sources.length === 0) throw new ReplayUsageError('no input files', 'name one or more record files, or - for standard input');
  if (options.clients.length === 0 && !dryRun) throw new ReplayUsageError('no nodes to write to');
  if (sources.filter((s) => s === '-').length > 1) throw new ReplayUsageError('standard input (-) is named more than once');
  const infos: SourceInfo[] = [];
  for (const s of sources) infos.push(await statSource(s));
  if (options.strict && infos.some((i) => i.stdin)) {
    throw new ReplayUsageError('--strict reads every input twice, and standard input can be read only once', 'save the records to a file first, or drop --strict');
  }
  if (options.rate !== undefined && !(options.rate > 0)) throw new ReplayUsageError(`rate: ${options.rate} must be > 0 records/s`);
  const to = options.to ?? 'any';
  if (to === 'owners' || to === 'primary') {
    if (options.ring === undefined) throw new ReplayUsageError(`to ${to}: no ring given`, 'pass the ring the nodes run (discoverRing(seed).ring), or write with to any or all');
    const ringNodes = options.ring.topology.nodes.length;
    if (options.clients.length !== ringNodes) {
      throw new ReplayUsageError(`to ${to}: ${options.clients.length} clients for a ring of ${ringNodes} nodes`, 'one client per ring node, in topology order');
    }
  }
  if (!dryRun) {
    // Refused before anything is sent; the opens themselves refuse links too (O_NOFOLLOW, rename), should one appear later.
    for (const [what, path] of [
      ['rejects file', options.rejectsPath],
      ['state file', options.statePath],
    ] as const) {
      if (path !== undefined && isSymlink(path)) {
        throw new ReplayUsageError(
          `${what} ${path} is a symbolic link: refusing to write through it`,
          `remove it, or name another path with --${what === 'state file' ? 'state' : 'rejects'}`,
        );
      }
    }
  }
  return infos;
}

/** One run of the write pipeline: read -> validate -> batch -> route -> acknowledge. */
class Replay {
  private readonly now: () => number;
  private readonly started: number;
  private readonly dryRun: boolean;
  private readonly batchSize: number;
  private readonly batchBytes: number;
  private readonly signal: AbortSignal | undefined;
  private readonly ledger: Ledger;
  private readonly bodies: BodyPool;
  private readonly route: Route;
  private readonly limiter: RateLimiter | undefined;
  private readonly inputs: InputReport[] = [];
  private readonly bytesTotal: number | undefined;
  private bytesDone = 0;
  private currentBytes = (): number => 0;
  /** A dry run: the records each node would have been sent. */
  private readonly dryCounts: number[];

  static async open(sources: readonly string[], options: ReplayOptions): Promise<Replay> {
    const infos = await checkedInputs(sources, options);
    const dryRun = options.dryRun ?? false;
    const resume = new ResumeState(infos, {
      path: dryRun ? undefined : options.statePath,
      resume: options.resume ?? false,
      // `force` is the old name of allowChangedInput, still honoured for library callers.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      allowChangedInput: options.allowChangedInput ?? options.force ?? false,
      kind: options.kind ?? 'nnt',
      rejectsPath: options.rejectsPath,
      intervalMs: options.stateIntervalMs ?? 1000,
      now: options.now ?? Date.now,
      emit: options.onEvent ?? (() => undefined),
    });
    const rejects = new RejectsFile(dryRun ? undefined : options.rejectsPath, resume.resumed);
    await rejects.loadExisting();
    return new Replay(infos, options, resume, rejects);
  }

  private constructor(
    private readonly infos: readonly SourceInfo[],
    private readonly options: ReplayOptions,
    private readonly resume: ResumeState,
    private readonly rejects: RejectsFile,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.dryRun = options.dryRun ?? false;
    this.batchSize = options.batchSize ?? 5000;
    this.batchBytes = options.batchBytes ?? 4 * 1024 * 1024;
    this.signal = options.signal;
    const concurrency = Math.max(1, options.concurrency ?? 4);
    const unhealthyMs = options.unhealthyMs ?? 10_000;
    const emit = options.onEvent ?? (() => undefined);
    this.ledger = new Ledger(
      options.clients.map((c) => c.url),
      this.signal,
    );
    this.bodies = new BodyPool(concurrency + 2);
    this.limiter = options.rate !== undefined && !this.dryRun ? new RateLimiter(options.rate, this.now) : undefined;
    this.bytesTotal = infos.every((i) => i.size !== undefined) ? infos.reduce((a, i) => a + (i.size ?? 0), 0) : undefined;
    this.dryCounts = options.clients.map(() => 0);
    const ctx: SendContext = { clients: options.clients, ledger: this.ledger, signal: this.signal, emit, reject: (entry) => this.reject(entry) };
    const ring = options.to === 'owners' || options.to === 'primary' ? options.ring : undefined;
    const writer = new NodeWriter(ctx, {
      write: writerFor(options.kind ?? 'nnt'),
      method: options.method ?? 'POST',
      ackRetry: options.ackRetry ?? DEFAULT_RETRY,
      // `owners`: a copy an owner did not take is owed to it; `primary`: a replay starts at the primary again.
      ...(ring && options.to === 'owners' ? { ownerOf: (i: number) => ring.topology.nodes[i]!.id } : {}),
    });
    const pool = new NodePool(options.clients, this.now, unhealthyMs, emit);
    this.route = ring
      ? new OwnersRoute(ctx, writer, pool, this.bodies, ring, {
          batchSize: this.batchSize,
          batchBytes: this.batchBytes,
          concurrency,
          unhealthyMs,
          mode: options.to === 'primary' ? 'primary' : 'owners',
        })
      : new AnyAllRoute(ctx, writer, pool, this.bodies, options.to === 'all' ? 'all' : 'any', concurrency);
  }

  async run(): Promise<ReplayResult> {
    const { ledger, signal } = this;
    try {
      if (this.options.strict) {
        await this.runPass(false);
        if (ledger.inputError === undefined && this.rejects.count > 0 && !signal?.aborted) ledger.stop = 'strict';
        if (ledger.stop === undefined && !signal?.aborted) {
          // Second pass: everything is valid, send it.
          ledger.read = 0;
          this.inputs.length = 0;
          this.bytesDone = 0;
          await this.runPass(true);
        }
      } else {
        await this.runPass(true);
      }
      await this.route.drain();
    } finally {
      this.rejects.close();
    }
    if (signal?.aborted) ledger.stop = 'interrupted';
    return this.result();
  }

  private progress(): ReplayProgress {
    const { ledger } = this;
    return {
      read: ledger.read,
      written: ledger.written,
      rejected: this.rejects.count,
      batches: ledger.batches,
      retries: ledger.retries,
      failedBatches: ledger.failedBatches,
      bytesRead: this.bytesDone + this.currentBytes(),
      bytesTotal: this.bytesTotal,
      elapsedMs: this.now() - this.started,
      inFlight: this.route.inFlight,
    };
  }

  private reject(entry: RejectEntry & { owner?: string }): void {
    this.rejects.write(entry);
    this.options.onEvent?.({ type: 'rejected', entry });
    if (this.options.maxErrors !== undefined && this.rejects.count > this.options.maxErrors && this.ledger.stop === undefined) this.ledger.stop = 'max-errors';
  }

  /** Every input in turn; `send` false: validate only (the first pass of --strict). */
  private async runPass(send: boolean): Promise<void> {
    for (const info of this.infos) {
      if (this.ledger.stopped()) break;
      await this.readInput(info, send);
    }
  }

  /** Opens one input (at its saved position when resumed) and the batcher its records go into. */
  private async openInput(info: SourceInfo, resumed: ResumePoint | undefined) {
    const { options, signal } = this;
    const format = resumed?.format ?? options.format ?? 'auto';
    const handle = await openRecordChunks(info, {
      format,
      ...(resumed ? { start: resumed.pos } : {}),
      ...(options.stdin ? { stdin: options.stdin } : {}),
      ...(signal ? { signal } : {}),
    });
    this.currentBytes = () => handle.bytesRead();
    options.onEvent?.({ type: 'input', name: info.name, format: handle.format, ...(resumed ? { resumedAt: resumed.pos, seeked: handle.seeked } : {}) });
    const start = resumed?.pos ?? { record: 0, byte: 0, line: 1 };
    const batcher = new Batcher({
      source: info.name,
      batchSize: this.batchSize,
      batchBytes: this.batchBytes,
      pool: this.bodies,
      kind: options.kind ?? 'nnt',
      ...(options.smallestSpan !== undefined ? { smallestSpan: options.smallestSpan } : {}),
      ...(options.histogramPeriods !== undefined ? { histogramPeriods: options.histogramPeriods } : {}),
      start,
      deferCopies: true,
      // Owner routing reads where each record's id and metric are rather than scanning for them again.
      ranges: this.route instanceof OwnersRoute,
    });
    return { handle, start, batcher };
  }

  private async readInput(info: SourceInfo, send: boolean): Promise<void> {
    const { ledger, signal } = this;
    const resumed = send ? this.resume.starts.get(info.name) : undefined;
    if (resumed?.done) {
      this.inputs.push({ name: info.name, format: resumed.format, read: 0, skipped: resumed.pos.record, resumedAt: resumed.pos, position: resumed.pos });
      this.bytesDone += info.size ?? 0;
      return;
    }
    const { handle, start, batcher } = await this.openInput(info, resumed);
    // The counts carried from the earlier run(s) keep adding up in the state file.
    const water = new LowWater(start, resumed?.settled);
    const report: InputReport = { name: info.name, format: handle.format, read: 0, skipped: start.record, position: start, ...(resumed ? { resumedAt: resumed.pos } : {}) };
    this.inputs.push(report);
    const entry: InputState = { format: handle.format, size: info.size ?? null, mtimeMs: info.mtimeMs ?? null, gzip: info.gzip, done: false, ...start };
    const save = (): void => this.resume.set(info.name, { ...entry, settled: { ...water.settled } });
    const onAck = (): void => {
      Object.assign(entry, water.position);
      report.position = water.position;
      if (send) {
        save();
        this.resume.persist(false);
      }
    };
    if (send) save();
    // Invalid records since the last batch: the next batch's position moves past them.
    let invalid = 0;
    const take = (): number => {
      const n = invalid;
      invalid = 0;
      return n;
    };
    try {
      outer: for await (const chunk of handle.chunks) {
        for (let j = 0, n = chunkSize(chunk); j < n; j++) {
          ledger.read++;
          report.read++;
          const added = batcher.addFrom(chunk, j);
          // The signal changes only while this loop waits (or in a listener a reject calls): it is
          // looked at then, not for every record (its getter costs ~10 ns, 1% of a record).
          let look = false;
          if (added.kind === 'reject') {
            invalid++;
            this.reject(added.reject);
            look = true;
          }
          if (added.full && send) {
            await this.dispatch(added.full, water, onAck, take());
            look = true;
          }
          if (look || j === 0 ? ledger.stopped() : ledger.stop !== undefined) {
            batcher.release();
            break outer;
          }
        }
        // The reader reuses the chunk's memory for the next one: what the batch still holds of it is copied now.
        batcher.release();
      }
    } catch (err) {
      ledger.inputError = err as Error;
      ledger.stop ??= 'input-error';
    }
    // What was validated still goes (after an input error or --max-errors too: those records were fine); only an interrupt drops it.
    if (send && !signal?.aborted) await this.dispatch(batcher.flush(), water, onAck, take());
    await this.route.drain();
    this.bytesDone += handle.bytesRead();
    this.currentBytes = () => 0;
    if (send) {
      entry.done = ledger.stop === undefined && !signal?.aborted;
      Object.assign(entry, water.position);
      report.position = water.position;
      save();
      try {
        this.resume.persist(true);
      } catch (err) {
        ledger.inputError ??= err as Error;
        ledger.stop ??= 'input-error';
      }
    }
  }

  /** `invalid`: records the local check rejected that this batch's position moves past. */
  private async dispatch(batch: Batch, water: LowWater, onAck: () => void, invalid: number): Promise<void> {
    const { ledger, signal } = this;
    if (this.dryRun) {
      if (batch.count > 0) {
        ledger.batches++;
        this.route.plan(batch, (node, records) => {
          this.dryCounts[node]! += records;
          ledger.nodes[node]!.batches++;
        });
      }
      water.ack(batch.seq, batch.end);
      this.bodies.give(batch.body);
      return;
    }
    await this.route.ready();
    // Nodes all failing or a signal: this batch stays unsent and unacknowledged (a resume sends it).
    if (signal?.aborted || ledger.stop === 'nodes-down') return;
    if (this.limiter && batch.count > 0) {
      try {
        await this.limiter.take(batch.count, signal);
      } catch {
        return; // interrupted while waiting
      }
    }
    const settle = (outcome: BatchOutcome): void => {
      try {
        if (water.ack(batch.seq, batch.end, { ...outcome, invalid })) onAck();
      } catch (err) {
        ledger.failInput(err);
      }
      this.options.onProgress?.(this.progress());
    };
    await this.route.send(batch, settle);
    // The records are read and checked without a real wait, so nothing reaches a socket until
    // the window is full; a turn of the event loop per batch puts this one on the wire now (the
    // node starts on the first batch while the next ones are built, not after the fifth).
    await new Promise((resolve) => setImmediate(resolve));
  }

  private result(): ReplayResult {
    const { ledger, rejects, dryRun, options } = this;
    const earlier = this.resume.earlier;
    const stopped = ledger.stop ?? 'done';
    const nodes = ledger.nodes;
    return {
      stopped,
      read: ledger.read,
      written: ledger.written,
      fallbackRecords: nodes.reduce((a, n) => a + n.fallbackRecords, 0),
      writtenToSome: ledger.writtenToSome,
      acknowledged: { byCount: nodes.reduce((a, n) => a + n.ackedByCount, 0), bare: nodes.reduce((a, n) => a + n.ackedBare, 0) },
      toNamedOwner: ledger.toNamedOwner,
      ...(earlier ? { earlier } : {}),
      rejected: rejects.count,
      rejectedByNode: ledger.rejectedByNode,
      failedRecords: ledger.failedRecords,
      batches: ledger.batches,
      failedBatches: ledger.failedBatches,
      retries: ledger.retries,
      bytes: this.bytesDone,
      seconds: (this.now() - this.started) / 1000,
      rejectsPath: (rejects.count > 0 || (earlier !== undefined && rejectedOf(earlier) > 0)) && !dryRun ? options.rejectsPath : undefined,
      // A complete run, or one stopped before anything was acknowledged, leaves no state behind.
      statePath: this.resume.finish(stopped),
      ...(ledger.inputError ? { inputError: ledger.inputError } : {}),
      nodes: dryRun ? nodes.map((n, k) => ({ ...n, records: this.dryCounts[k]! })) : nodes,
      inputs: this.inputs,
      dryRun,
    };
  }
}
