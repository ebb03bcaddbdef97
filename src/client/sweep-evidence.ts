/**
 * Deciding from evidence how a node's sweep ended. Pure: the poll loop feeds every status and
 * every failed poll in (with the time it happened), then asks for a verdict; nothing here does
 * I/O, so every case is unit-tested with hand-made statuses and an injected clock.
 *
 * Two kinds of node:
 * - nodes that keep a record of their sweeps (the reference node: `instance` on every type,
 *   `last_*` while a type is idle). Their record decides: `done` only when, for every type we
 *   asked for, the record names our sweep (delete time, spans) and says `completed`.
 * - nodes that keep none (the production store). `done` only when the node was seen idle, every
 *   poll since the DELETE (or since our sweep was last seen running) was answered, and no poll
 *   showed another sweep or a cancellation.
 */
import { DATA_TYPES, type DataType, type LastSweep, type SweepRequest, type SweepStatus, type TypeStatus } from '../protocol/index.js';

/** Final states a watched node can end in (the DELETE's own failures and `skipped` are decided elsewhere). */
export type PollVerdictState = 'done' | 'replaced' | 'cancelled' | 'failed' | 'unconfirmed' | 'lost' | 'timed_out' | 'interrupted';

export interface Verdict {
  state: PollVerdictState;
  /** One line: what the state rests on. */
  reason: string;
  /** The node's own error (a failed sweep's `last_error`). */
  error?: string;
  /** Another sweep seen on the node (replaced), in words. */
  other?: string;
}

/** A poll that brought no usable status: `no_answer` (unreachable, timeout) or `bad_answer` (the node answered, unusably). */
export type PollFailureKind = 'no_answer' | 'bad_answer';

export interface SweepEvidence {
  readonly request: SweepRequest;
  /** The node's `instance` before the DELETE (preflight), when it sent one. */
  readonly baselineInstance?: string;
  /** The sweep the preflight saw running (one `--force` replaces), in words. */
  readonly baselineRunning?: string;
  /** A poll after the DELETE still showed that replaced sweep running (a node slow to cancel it). */
  readonly staleSeen?: boolean;
  /** Every `instance` seen since the DELETE, in order of first sight. */
  readonly instances: readonly string[];
  /** The node sent `instance` or `last_*` at some point: it keeps sweep records. */
  readonly keepsRecords: boolean;
  readonly polls: number;
  readonly answered: number;
  /** Polls without a usable status since the DELETE or since our sweep was last seen running. */
  readonly gap?: { polls: number; since: number; kind: PollFailureKind; lastError: string };
  /** Polls without a usable status in the whole run. */
  readonly missed: number;
  /** A poll showed our sweep running. */
  readonly seenOurs: boolean;
  /** The first other sweep a poll showed running, in words. */
  readonly other?: { at: number; what: string };
  /** The first poll that showed `cancelling` on a type we asked for. */
  readonly cancelling?: { at: number };
  /** The last usable status and when it came. */
  readonly last?: SweepStatus;
  readonly lastAt?: number;
}

export function newEvidence(request: SweepRequest, baseline?: SweepStatus): SweepEvidence {
  const instance = baseline ? instanceOf(baseline) : undefined;
  const running = baseline && DATA_TYPES.some((t) => baseline[t].running) ? describeRunning(baseline, request.requestId) : undefined;
  return {
    request,
    ...(instance !== undefined ? { baselineInstance: instance } : {}),
    ...(running !== undefined ? { baselineRunning: running } : {}),
    instances: [],
    keepsRecords: baseline ? keepsRecords(baseline) : false,
    polls: 0,
    answered: 0,
    missed: 0,
    seenOurs: false,
  };
}

// ---------------------------------------------------------------- comparing with the request

/** `"all"`, or the spans in ascending order: how a node shows the spans a request deletes. */
export function expectedRollups(req: SweepRequest, type: DataType): string | undefined {
  if (type === 'text') return undefined;
  const list = type === 'nnt' ? req.nntRollups : req.histogramRollups;
  return list?.length ? [...list].sort((a, b) => a - b).join(',') : 'all';
}

function sameSpans(req: SweepRequest, type: DataType, shown: string | undefined): boolean {
  if (type === 'text' || shown === undefined) return true;
  const want = expectedRollups(req, type)!;
  const got = shown.trim().toLowerCase();
  if (got === want) return true;
  // A node shows a list that covers every span it has as "all": an explicit list may come back so.
  if (got === 'all') return want !== 'all';
  const norm = got
    .split(',')
    .map((s) => Number(s.trim()))
    .sort((a, b) => a - b)
    .join(',');
  return norm === want;
}

/** Does a running type belong to our sweep? Attributes the node did not send are not held against it. */
export function runningIsOurs(req: SweepRequest, type: DataType, s: TypeStatus): boolean {
  if (!req.types.includes(type)) return false;
  if (s.timestamp !== undefined && s.timestamp !== req.before) return false;
  // An identical sweep another client started carries its own request id.
  if (req.requestId !== undefined && s.request_id !== undefined && s.request_id !== req.requestId) return false;
  return sameSpans(req, type, s.rollups);
}

/** Does a record describe our sweep (same delete time, same spans)? */
function recordIsOurs(req: SweepRequest, type: DataType, last: LastSweep): boolean {
  if (req.requestId !== undefined && last.requestId !== undefined && last.requestId !== req.requestId) return false;
  return last.timestamp === req.before && (type === 'text' || (last.rollups !== undefined && sameSpans(req, type, last.rollups)));
}

/** What a `done` rests on when the node could not say whose sweep it was (it records no request id). */
function identityNote(req: SweepRequest, status: SweepStatus | undefined): string {
  if (req.requestId === undefined) return '';
  const recorded = req.types.some((t) => status?.[t].last?.requestId !== undefined);
  return recorded ? '' : '; the node records no request id, so whether it was ours or an identical sweep another client started could not be checked';
}

/**
 * Whether a node's own records say that `req` completed, for every type it names, at or after
 * `sinceMs` (epoch ms): the evidence a resumed retention step needs to count as done without
 * sending its DELETE again. Nodes that keep no records (the production store) never give it.
 */
export function recordShowsCompleted(req: SweepRequest, status: SweepStatus, sinceMs: number): boolean {
  return req.types.every((t) => {
    const s = status[t];
    const last = s.running ? undefined : s.last;
    return last !== undefined && recordIsOurs(req, t, last) && last.result === 'completed' && last.finished !== undefined && last.finished >= sinceMs;
  });
}

/** A node's own words inside a reason: one line, and not more of them than a reason can hold. */
function oneLine(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** `2023-07-22T04:26:40Z (1690000000)` */
export function describeEpoch(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')} (${seconds})`;
}

/** The sweep a status shows running, in words: `nnt,text before 2023-07-22T04:26:40Z (1690000000), nnt spans all`. */
export function describeRunning(status: SweepStatus, ours?: string): string {
  const types = DATA_TYPES.filter((t) => status[t].running);
  const times = [...new Set(types.map((t) => status[t].timestamp))];
  const when =
    times.length === 1 ? (times[0] !== undefined ? ` before ${describeEpoch(times[0])}` : '') : ` before ${types.map((t) => `${t} ${status[t].timestamp ?? '?'}`).join(', ')}`;
  const spans = types.filter((t) => t !== 'text' && status[t].rollups !== undefined).map((t) => `${t} spans ${oneLine(status[t].rollups!, 60)}`);
  const id = types.map((t) => status[t].request_id).find((x) => x !== undefined);
  const ids = id !== undefined ? `, request id ${oneLine(id, 64)}${ours !== undefined ? ` (ours: ${ours})` : ''}` : '';
  return `${types.join(',')}${when}${spans.length ? `, ${spans.join(', ')}` : ''}${ids}`;
}

function describeRecord(type: DataType, last: LastSweep): string {
  const spans = type !== 'text' && last.rollups !== undefined ? `, spans ${oneLine(last.rollups, 60)}` : '';
  return `${type} before ${last.timestamp !== undefined ? describeEpoch(last.timestamp) : '?'}${spans}`;
}

function instanceOf(status: SweepStatus): string | undefined {
  return DATA_TYPES.map((t) => status[t].instance).find((i) => i !== undefined);
}

function keepsRecords(status: SweepStatus): boolean {
  return DATA_TYPES.some((t) => status[t].instance !== undefined || status[t].last !== undefined);
}

// ---------------------------------------------------------------- observing

/** Folds one usable status (a poll's answer at `at`) into the evidence. */
export function observeStatus(ev: SweepEvidence, status: SweepStatus, at: number): SweepEvidence {
  const req = ev.request;
  const instance = instanceOf(status);
  const running = DATA_TYPES.filter((t) => status[t].running);
  const notOurs = running.some((t) => !runningIsOurs(req, t, status[t]));
  const what = notOurs ? describeRunning(status, req.requestId) : undefined;
  // The very sweep the preflight saw (the one --force replaces), still shown right after our
  // DELETE, is a node slow to cancel it, not a newer sweep: keep watching for ours.
  const stale = notOurs && !ev.seenOurs && what === ev.baselineRunning;
  const foreign = notOurs && !stale;
  const ours = running.length > 0 && !notOurs;
  const cancelling = req.types.some((t) => status[t].cancelling === true);
  const { gap, ...rest } = ev;
  // Seeing our sweep still running closes a gap: whatever happened in it, the sweep survived it.
  const keepGap = gap && !ours ? { gap } : {};
  return {
    ...rest,
    ...keepGap,
    polls: ev.polls + 1,
    answered: ev.answered + 1,
    instances: instance !== undefined && !ev.instances.includes(instance) ? [...ev.instances, instance] : ev.instances,
    keepsRecords: ev.keepsRecords || keepsRecords(status),
    seenOurs: ev.seenOurs || ours,
    ...(stale ? { staleSeen: true } : {}),
    ...(foreign && !ev.other ? { other: { at, what: what! } } : {}),
    ...(cancelling && !ev.cancelling ? { cancelling: { at } } : {}),
    last: status,
    lastAt: at,
  };
}

/** Folds one poll that brought no usable status into the evidence. */
export function observeFailure(ev: SweepEvidence, failure: { kind: PollFailureKind; detail: string }, at: number): SweepEvidence {
  const gap = ev.gap
    ? { polls: ev.gap.polls + 1, since: ev.gap.since, kind: failure.kind === 'no_answer' ? 'no_answer' : ev.gap.kind, lastError: failure.detail }
    : { polls: 1, since: at, kind: failure.kind, lastError: failure.detail };
  return { ...ev, polls: ev.polls + 1, missed: ev.missed + 1, gap };
}

/** Whether polling can stop: our types are idle, or a poll showed another sweep or a cancellation. */
export function settled(ev: SweepEvidence): boolean {
  if (!ev.last) return false;
  return ev.other !== undefined || ev.cancelling !== undefined || ev.request.types.every((t) => !ev.last![t].running);
}

// ---------------------------------------------------------------- the verdict

function restartNote(ev: SweepEvidence): string | undefined {
  const seen = ev.baselineInstance !== undefined ? [ev.baselineInstance, ...ev.instances.filter((i) => i !== ev.baselineInstance)] : ev.instances;
  return seen.length > 1 ? `the node restarted (instance ${seen.join(' -> ')})` : undefined;
}

function gapNote(gap: NonNullable<SweepEvidence['gap']>, at: number | undefined): string {
  const what = gap.kind === 'no_answer' ? 'got no answer' : 'got no usable status';
  const span = at !== undefined ? ` over ${Math.max(0, Math.round((at - gap.since) / 100) / 10)}s` : '';
  return `${gap.polls} poll(s) ${what}${span} (${gap.lastError})`;
}

/** Verdict from the records of a node that keeps them. */
function fromRecords(ev: SweepEvidence, status: SweepStatus): Verdict {
  const req = ev.request;
  const failed: Array<[DataType, LastSweep]> = [];
  const cancelled: DataType[] = [];
  const replaced: Array<[DataType, LastSweep]> = [];
  const foreign: Array<[DataType, LastSweep]> = [];
  const missing: DataType[] = [];
  for (const t of req.types) {
    const s = status[t];
    const last = s.running ? undefined : s.last;
    if (!last || last.timestamp === undefined) missing.push(t);
    else if (!recordIsOurs(req, t, last)) foreign.push([t, last]);
    else if (last.result === 'completed') continue;
    else if (last.result === 'failed') failed.push([t, last]);
    else if (last.result === 'cancelled') cancelled.push(t);
    else if (last.result === 'replaced') replaced.push([t, last]);
    else missing.push(t);
  }
  if (!failed.length && !cancelled.length && !replaced.length && !foreign.length && !missing.length) {
    return { state: 'done', reason: `the node's record says our sweep completed${identityNote(req, status)}` };
  }
  if (failed.length) {
    const [t, last] = failed[0]!;
    const error = oneLine(last.error ?? 'no error given');
    return { state: 'failed', reason: `the node's record says the sweep of ${failed.map(([x]) => x).join(',')} failed: ${error}`, error: `${t}: ${error}` };
  }
  if (cancelled.length) return { state: 'cancelled', reason: `the node's record says the sweep of ${cancelled.join(',')} was cancelled` };
  if (replaced.length || ev.other) {
    // (a poll that saw another sweep running is evidence enough, whatever the record says by now)
    const recorded = replaced.find(([, l]) => l.replacedBy)?.[1].replacedBy;
    const by = ev.other?.what ?? (recorded !== undefined ? oneLine(recorded) : undefined);
    const types = replaced.length ? replaced.map(([t]) => t).join(',') : req.types.join(',');
    return { state: 'replaced', reason: `the sweep of ${types} was replaced by another${by ? `: ${by}` : ''}`, ...(by ? { other: by } : {}) };
  }
  if (ev.cancelling) return { state: 'cancelled', reason: 'a poll showed the sweep cancelling' };
  if (foreign.length) {
    const other = foreign.find(([, l]) => l.requestId !== undefined && req.requestId !== undefined && l.requestId !== req.requestId);
    if (other && foreign.every(([t, l]) => l.timestamp === req.before && (t === 'text' || (l.rollups !== undefined && sameSpans(req, t, l.rollups))))) {
      const what = `an identical sweep with request id ${oneLine(other[1].requestId!, 64)} (ours: ${req.requestId})`;
      return { state: 'replaced', reason: `the node's last sweep is ${what}: another client's sweep replaced ours`, other: what };
    }
    const what = foreign.map(([t, l]) => describeRecord(t, l)).join('; ');
    return {
      state: 'replaced',
      reason: `the node's last sweep is another one (${what}): it replaced ours, or started just after ours finished`,
      other: what,
    };
  }
  const restart = restartNote(ev);
  const why = restart ?? (ev.gap ? `after a gap: ${gapNote(ev.gap, ev.lastAt)}` : 'it keeps sweep records but has none');
  return { state: 'unconfirmed', reason: `no record of our sweep of ${missing.join(',')} on the node: ${why}; whether it ran to the end is unknown` };
}

/**
 * How the node's sweep ended, once polling settled (see `settled`). A node that keeps records is
 * judged by them; any other by what the polls saw.
 */
export function classify(ev: SweepEvidence): Verdict {
  const status = ev.last;
  if (!status) return { state: 'unconfirmed', reason: 'no poll got a usable status' };
  if (ev.keepsRecords) return fromRecords(ev, status);
  if (ev.cancelling) return { state: 'cancelled', reason: 'a poll showed the sweep cancelling' };
  if (ev.other) return { state: 'replaced', reason: `a poll showed another sweep running: ${ev.other.what}`, other: ev.other.what };
  if (ev.gap) {
    return {
      state: 'unconfirmed',
      reason: `idle after ${gapNote(ev.gap, ev.lastAt)}: the node may have restarted and dropped the sweep (it keeps no record to ask)`,
    };
  }
  if (ev.staleSeen && !ev.seenOurs) {
    return {
      state: 'unconfirmed',
      reason: `after our DELETE the node still showed the sweep it replaced (${ev.baselineRunning}), then idle; ours was never seen running (the node keeps no record to ask)`,
    };
  }
  const seen = ev.seenOurs ? 'seen running, then idle' : 'idle at the first poll';
  const note = ev.request.requestId !== undefined ? '; it records no request id, so an identical sweep from another client could not be told apart' : '';
  return { state: 'done', reason: `${seen}; no poll missed, no other sweep seen (the node keeps no record to confirm${note})` };
}

// ---------------------------------------------------------------- the DELETE itself

/** Socket-level codes that mean the request never reached the node (it cannot have started anything). */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * The final state of a node whose DELETE did not come back `[]`. Only `unreachable` and `timeout`
 * mean "no answer"; then it matters whether the request can have reached the node: a refused
 * connection cannot have started a sweep (`failed`), a reset or a missing answer might have
 * (`unconfirmed`). Any answer (an HTTP error, a body that is not `[]`, a TLS refusal) means the
 * node, or something in front of it, answered: `failed`, with its words.
 */
export function classifyDeleteFailure(err: { code: string; detail: string; cause?: unknown }): Verdict {
  if (err.code === 'unreachable' || err.code === 'timeout') {
    const codes = causeCodes(err.cause);
    if (codes.some((c) => NOT_DELIVERED.has(c)) || /\b(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_CONNECT_TIMEOUT)\b/.test(err.detail)) {
      return { state: 'failed', reason: `the DELETE did not reach the node: ${err.detail}`, error: err.detail };
    }
    return {
      state: 'unconfirmed',
      reason: `no answer to the DELETE (${err.detail}): the node may have started the sweep; check with tsnode status`,
      error: err.detail,
    };
  }
  if (err.code === 'http') return { state: 'failed', reason: `the node refused the DELETE: ${err.detail}`, error: err.detail };
  // (`no_sweep_api`: a 404 on /sweep_delete, the store's versions from 0.19.23 on.)
  if (err.code === 'no_sweep_api') return { state: 'failed', reason: `the node has no sweep API: ${err.detail}`, error: err.detail };
  if (err.code === 'tls') return { state: 'failed', reason: `the DELETE was not sent: ${err.detail}`, error: err.detail };
  return {
    state: 'failed',
    reason: `the DELETE was answered with something other than [] (${err.detail}); whether a sweep started is unknown`,
    error: err.detail,
  };
}
