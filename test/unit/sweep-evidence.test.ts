import { describe, expect, it } from 'vitest';
import { classify, recordShowsCompleted, classifyDeleteFailure, newEvidence, observeFailure, observeStatus, settled, type SweepEvidence } from '../../src/client/sweep-evidence.js';
import type { LastSweep, SweepRequest, SweepStatus, TypeStatus } from '../../src/protocol/index.js';

const T = 1_690_000_000;
const REQ: SweepRequest = { before: T, types: ['nnt'] };
const idle: TypeStatus = { running: false };

function st(nnt: TypeStatus = idle, text: TypeStatus = idle, histogram: TypeStatus = idle): SweepStatus {
  return { nnt, text, histogram };
}
/** A reference node's status: `instance` on every type, `last` on the idle ones that have one. */
function ref(instance: string, types: Partial<Record<'nnt' | 'text' | 'histogram', TypeStatus>> = {}): SweepStatus {
  const one = (t: TypeStatus | undefined): TypeStatus => ({ ...(t ?? idle), instance });
  return { nnt: one(types.nnt), text: one(types.text), histogram: one(types.histogram) };
}
const runningOurs: TypeStatus = { running: true, timestamp: T, rollups: 'all', current_uuid: 'x' };
const rec = (l: LastSweep): TypeStatus => ({ running: false, last: l });

/** Feeds observations at t0, t0+1000, ... (the injected clock of the poll loop). */
function feed(ev: SweepEvidence, ...obs: Array<SweepStatus | { fail: 'no_answer' | 'bad_answer' }>): SweepEvidence {
  let at = 1_000_000;
  for (const o of obs) {
    at += 1000;
    ev = 'fail' in o ? observeFailure(ev, { kind: o.fail, detail: o.fail === 'no_answer' ? 'connection refused (ECONNREFUSED)' : 'HTTP 502' }, at) : observeStatus(ev, o, at);
  }
  return ev;
}

describe('a node that keeps no records (production store)', () => {
  it('idle at the first poll with no gap is done, and says what that rests on', () => {
    const ev = feed(newEvidence(REQ, st()), st());
    expect(settled(ev)).toBe(true);
    expect(classify(ev)).toEqual({ state: 'done', reason: expect.stringMatching(/idle at the first poll; no poll missed, no other sweep seen \(the node keeps no record/) });
  });

  it('our own sweep seen running (same time, types, spans), then idle, is done', () => {
    const ev = feed(newEvidence(REQ, st()), st(runningOurs), st(runningOurs), st());
    expect(classify(ev)).toMatchObject({ state: 'done', reason: expect.stringMatching(/^seen running, then idle/) });
  });

  it('an explicit span list shown as "all" is ours (a node shows a list covering every span so)', () => {
    const req: SweepRequest = { before: T, types: ['nnt'], nntRollups: [300, 60] };
    expect(settled(feed(newEvidence(req), st({ running: true, timestamp: T, rollups: 'all' })))).toBe(false);
    expect(settled(feed(newEvidence(req), st({ running: true, timestamp: T, rollups: '60,300' })))).toBe(false);
    expect(settled(feed(newEvidence(req), st({ running: true, timestamp: T, rollups: '300' })))).toBe(true);
  });

  it('idle after unanswered polls is unconfirmed: the node may have restarted', () => {
    const ev = feed(newEvidence(REQ, st()), st(runningOurs), { fail: 'no_answer' }, { fail: 'no_answer' }, st());
    const v = classify(ev);
    expect(v.state).toBe('unconfirmed');
    expect(v.reason).toMatch(/^idle after 2 poll\(s\) got no answer over 2s \(connection refused \(ECONNREFUSED\)\): the node may have restarted/);
  });

  it('a gap at the very start (before any answer) also leaves it unconfirmed', () => {
    expect(classify(feed(newEvidence(REQ), { fail: 'no_answer' }, st())).state).toBe('unconfirmed');
  });

  it('answers that are not a status count as a gap too', () => {
    const v = classify(feed(newEvidence(REQ), st(runningOurs), { fail: 'bad_answer' }, st()));
    expect(v).toMatchObject({ state: 'unconfirmed', reason: expect.stringMatching(/got no usable status .*HTTP 502/) });
  });

  it('a gap closed by seeing our sweep still running is not held against it', () => {
    const ev = feed(newEvidence(REQ), st(runningOurs), { fail: 'no_answer' }, st(runningOurs), st());
    expect(ev.missed).toBe(1);
    expect(classify(ev).state).toBe('done');
  });

  it.each([
    ['another delete time', st({ running: true, timestamp: T + 60, rollups: 'all' }), /nnt before 2023-07-22T04:27:40Z \(1690000060\), nnt spans all/],
    ['other spans', st({ running: true, timestamp: T, rollups: '60' }), /nnt before .* nnt spans 60/],
    ['another type', st(idle, { running: true, timestamp: T }), /^a poll showed another sweep running: text before/],
  ])('a poll showing a sweep with %s is replaced, naming it, and stops polling', (_what, status, named) => {
    const ev = feed(newEvidence(REQ), st(runningOurs), status);
    expect(settled(ev)).toBe(true);
    const v = classify(ev);
    expect(v.state).toBe('replaced');
    expect(v.reason).toMatch(named);
    expect(v.other).toBeDefined();
  });

  it('a poll showing cancelling is cancelled', () => {
    const ev = feed(newEvidence(REQ), st(runningOurs), st({ ...runningOurs, cancelling: true }));
    expect(settled(ev)).toBe(true);
    expect(classify(ev)).toEqual({ state: 'cancelled', reason: 'a poll showed the sweep cancelling' });
  });

  it('keeps polling while only our own types run, and waits for every requested type', () => {
    const req: SweepRequest = { before: T, types: ['nnt', 'text'] };
    expect(settled(feed(newEvidence(req), st(idle, { running: true, timestamp: T })))).toBe(false);
    expect(settled(feed(newEvidence(req), st(idle, idle)))).toBe(true);
  });
});

describe('a node that keeps records (reference node)', () => {
  const done = (l: Partial<LastSweep> = {}): TypeStatus => rec({ timestamp: T, rollups: 'all', result: 'completed', finished: 1, ...l });

  it('a sweep so fast it ended before the first poll is done by its record', () => {
    const ev = feed(newEvidence(REQ, ref('a')), ref('a', { nnt: done() }));
    expect(ev.seenOurs).toBe(false);
    expect(classify(ev)).toEqual({ state: 'done', reason: "the node's record says our sweep completed" });
  });

  it('the record beats a gap: unanswered polls, then the record says completed', () => {
    expect(classify(feed(newEvidence(REQ, ref('a')), ref('a', { nnt: runningOurs }), { fail: 'no_answer' }, ref('a', { nnt: done() }))).state).toBe('done');
  });

  it('a record of an earlier sweep with other spans is not ours', () => {
    const v = classify(feed(newEvidence({ ...REQ, nntRollups: [60] }, ref('a')), ref('a', { nnt: done({ rollups: 'all' }) })));
    // an explicit list shown as "all" is accepted; a record with list 300 is not ours
    expect(v.state).toBe('done');
    const w = classify(feed(newEvidence({ ...REQ, nntRollups: [60] }, ref('a')), ref('a', { nnt: done({ rollups: '300' }) })));
    expect(w).toMatchObject({ state: 'replaced', reason: expect.stringMatching(/the node's last sweep is another one \(nnt before .*, spans 300\)/) });
  });

  it.each([
    ['failed', { result: 'failed', error: 'SQLITE_FULL: disk full' }, 'failed', /record says the sweep of nnt failed: SQLITE_FULL: disk full/],
    ['cancelled', { result: 'cancelled' }, 'cancelled', /record says the sweep of nnt was cancelled/],
    ['replaced', { result: 'replaced', replacedBy: 'text before 1690000060' }, 'replaced', /replaced by another: text before 1690000060/],
  ] as const)('record says %s', (_n, l, state, reason) => {
    const v = classify(feed(newEvidence(REQ, ref('a')), ref('a', { nnt: runningOurs }), ref('a', { nnt: done(l) })));
    expect(v.state).toBe(state);
    expect(v.reason).toMatch(reason);
    if (state === 'failed') expect(v.error).toBe('nnt: SQLITE_FULL: disk full');
  });

  it('a restarted node (new instance, no record) is unconfirmed, even without a gap', () => {
    const v = classify(feed(newEvidence(REQ, ref('a')), ref('a', { nnt: runningOurs }), ref('b')));
    expect(v).toEqual({
      state: 'unconfirmed',
      reason: 'no record of our sweep of nnt on the node: the node restarted (instance a -> b); whether it ran to the end is unknown',
    });
  });

  it('a restart is seen even when the preflight showed no record yet', () => {
    const ev = feed(newEvidence(REQ), ref('a', { nnt: runningOurs }), ref('b'));
    expect(classify(ev).reason).toMatch(/instance a -> b/);
  });

  it('another sweep on other types after ours completed leaves ours done', () => {
    const ev = feed(newEvidence(REQ, ref('a')), ref('a', { nnt: done(), text: { running: true, timestamp: T + 5 } }));
    expect(settled(ev)).toBe(true);
    expect(classify(ev).state).toBe('done');
  });

  it('a poll that saw another sweep on our type is replaced, whatever record comes later', () => {
    const ev = feed(newEvidence(REQ, ref('a')), ref('a', { nnt: { running: true, timestamp: T + 5, rollups: 'all' } }));
    expect(classify(ev)).toMatchObject({ state: 'replaced', reason: expect.stringMatching(/replaced by another: nnt before .*1690000005/) });
  });
});

describe('the DELETE itself', () => {
  it.each([
    [{ code: 'http', detail: 'HTTP 400: bad span' }, 'failed', /^the node refused the DELETE: HTTP 400: bad span$/],
    [
      { code: 'bad_response', detail: 'sweep delete: the answer is not JSON ("<html>")' },
      'failed',
      /answered with something other than \[\] .*<html>.*whether a sweep started is unknown/,
    ],
    [{ code: 'bad_answer', detail: 'sweep delete: unexpected answer' }, 'failed', /other than \[\]/],
    [{ code: 'no_sweep_api', detail: 'HTTP 404' }, 'failed', /no sweep API/],
    [{ code: 'unreachable', detail: 'connection refused (ECONNREFUSED)' }, 'failed', /did not reach the node/],
    [{ code: 'timeout', detail: 'connect timed out (UND_ERR_CONNECT_TIMEOUT)' }, 'failed', /did not reach the node/],
    [{ code: 'unreachable', detail: 'connection reset (ECONNRESET)' }, 'unconfirmed', /may have started the sweep/],
    [{ code: 'timeout', detail: 'no response headers in time (UND_ERR_HEADERS_TIMEOUT)' }, 'unconfirmed', /no answer to the DELETE .*may have started/],
  ])('%o -> %s', (err, state, reason) => {
    const v = classifyDeleteFailure(err);
    expect(v.state).toBe(state);
    expect(v.reason).toMatch(reason);
  });
});

describe("a node's own words in a reason", () => {
  it('stay on one line and are cut short', () => {
    const long = `disk\nfull ${'x'.repeat(1000)}`;
    const v = classify(feed(newEvidence(REQ, ref('a')), ref('a', { nnt: rec({ timestamp: T, rollups: 'all', result: 'failed', error: long }) })));
    expect(v.state).toBe('failed');
    expect(v.reason).not.toMatch(/\n/);
    expect(v.reason.length).toBeLessThan(300);
    expect(v.reason).toMatch(/failed: disk full x+\.\.\.$/);
  });
});

describe('--force over a running sweep (production node slow to cancel it)', () => {
  const old: TypeStatus = { running: true, timestamp: T - 3600, rollups: 'all' };
  it('the replaced sweep still shown after our DELETE is not "another sweep": polling goes on', () => {
    const ev = feed(newEvidence(REQ, st(old)), st(old));
    expect(settled(ev)).toBe(false);
    expect(classify(feed(ev, st(runningOurs), st())).state).toBe('done');
  });
  it('idle without ever seeing ours is unconfirmed', () => {
    const v = classify(feed(newEvidence(REQ, st(old)), st(old), st()));
    expect(v).toMatchObject({
      state: 'unconfirmed',
      reason: expect.stringMatching(/still showed the sweep it replaced \(nnt before .*\(1689996400\), nnt spans all\), then idle; ours was never seen running/),
    });
  });
  it('the old sweep showing again after ours ran is another sweep', () => {
    const ev = feed(newEvidence(REQ, st(old)), st(runningOurs), st(old));
    expect(settled(ev)).toBe(true);
    expect(classify(ev).state).toBe('replaced');
  });
});

describe('recordShowsCompleted: a resumed step done without sending it again', () => {
  const req: SweepRequest = { before: T, types: ['nnt', 'text'], nntRollups: [60] };
  const done = (over: Partial<LastSweep> = {}): TypeStatus => rec({ timestamp: T, rollups: '60', result: 'completed', finished: 5_000, ...over });
  it('only when every type the request names has a completed record of this very request, finished at or after it was sent', () => {
    expect(recordShowsCompleted(req, st(done(), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 4_000)).toBe(true);
    // finished before it was sent: an earlier sweep, not this one
    expect(recordShowsCompleted(req, st(done(), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 6_000)).toBe(false);
    // one type without a record, another delete time, other spans, a result other than completed, no finish time
    expect(recordShowsCompleted(req, st(done()), 4_000)).toBe(false);
    expect(recordShowsCompleted(req, st(done({ timestamp: T - 1 }), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 4_000)).toBe(false);
    expect(recordShowsCompleted(req, st(done({ rollups: '300' }), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 4_000)).toBe(false);
    expect(recordShowsCompleted(req, st(done({ result: 'cancelled' }), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 4_000)).toBe(false);
    expect(recordShowsCompleted(req, st(done({ finished: undefined }), rec({ timestamp: T, result: 'completed', finished: 5_000 })), 4_000)).toBe(false);
    // a node that keeps no records never gives this evidence
    expect(recordShowsCompleted(req, st(), 0)).toBe(false);
  });
});
