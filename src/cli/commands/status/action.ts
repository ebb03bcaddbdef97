import { fanOut } from '../../../client/fan-out.js';
import { systemClock, type Clock } from '../../../client/clock.js';
import { pollUntilIdle } from '../../../client/sweep-poll.js';
import type { NodeClient } from '../../../client/node-client.js';
import { describeLag, hasLag, readOwnLag, readReplicationLag } from '../../../client/replication-lag.js';
import { UsageError } from '../../errors.js';
import { DATA_TYPES } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { MAX_TIMER_MS } from '../../values.js';
import { openTarget } from '../../node-source.js';
import { NodeProgress } from '../../render/node-progress.js';
import { MIN_WATCH_MS, type StatusOptions } from './options.js';
import { noStatus, type NodeStatus } from './node-status.js';
import { print } from './render.js';

export { MAX_WATCH_MS, MIN_WATCH_MS, parseWatch, type StatusOptions } from './options.js';

function exitFor(rows: readonly NodeStatus[], ctx: CliContext): ExitCode {
  if (ctx.signal.aborted) return EXIT.interrupted;
  const bad = rows.filter((r) => !r.ok).length;
  return bad === 0 ? EXIT.ok : bad === rows.length ? EXIT.failed : EXIT.partial;
}

/**
 * The watch loop's sleeper: every wait lasts at least `floorMs` and the whole time asked for,
 * whatever the timers do (a timer longer than 24.8 days fires after 1 ms), so no path through
 * the loop can poll without pausing. Only the run's signal ends a wait early.
 */
export function watchClock(floorMs: number, base: Clock = systemClock): Clock {
  return {
    now: base.now,
    sleep: async (ms, signal) => {
      const until = base.now() + Math.max(ms, floorMs);
      for (let left = until - base.now(); left > 0 && !signal?.aborted; left = until - base.now()) {
        await base.sleep(Math.min(left, MAX_TIMER_MS), signal);
      }
    },
  };
}

/**
 * `--until-caught-up`: polls every node's replication lag until none has data in flight towards
 * it; each change on stderr. Returns false when the nodes report no lag at all (nothing to wait for
 * that tsnode could see) or the run was interrupted.
 */
async function waitCaughtUp(clients: readonly NodeClient[], intervalMs: number, ctx: CliContext): Promise<boolean> {
  const clock = watchClock(MIN_WATCH_MS);
  let said = '';
  for (;;) {
    const report = await readReplicationLag(clients, { call: { signal: ctx.signal } });
    if (ctx.signal.aborted) return false;
    if (!report.checked) {
      ctx.log.error('replication lag: not reported by the nodes (no max_peer_lag, no /replication/json): cannot tell whether they are caught up');
      return false;
    }
    const behind = report.nodes.filter(hasLag);
    if (behind.length === 0) {
      ctx.log.info('replication: caught up (no data in flight towards any node)');
      return true;
    }
    const now = behind.map((n) => `${n.node} ${describeLag(n)}`).join('; ');
    if (now !== said) ctx.log.info(`waiting for replication: ${now}`);
    said = now;
    await clock.sleep(intervalMs, ctx.signal).catch(() => undefined);
    if (ctx.signal.aborted) return false;
  }
}

export async function statusAction(opts: StatusOptions, ctx: CliContext): Promise<ExitCode> {
  if (opts.untilCaughtUp && opts.watch === undefined) throw new UsageError('--until-caught-up waits with --watch', 'add --watch (e.g. --watch 2s --until-caught-up)');
  const run = await openTarget(opts, ctx, { command: 'tsnode status' });
  const net = run.network;
  try {
    const clients = run.nodes.map((n) => net.client(n));
    // Each node's lag beside its status, in the same slot (a failed /state leaves the status, lag null).
    const lags = new Map<string, number | null>();
    const readLag = (c: NodeClient): Promise<void> => readOwnLag(c, { signal: ctx.signal }).then((lag) => void lags.set(c.url, lag));
    const outcomes = await fanOut(clients, async (c) => {
      const lag = readLag(c);
      try {
        return await c.sweepStatus({ signal: ctx.signal });
      } finally {
        await lag;
      }
    });
    let rows: NodeStatus[] = outcomes.map((o) =>
      o.ok ? { node: o.node, ok: true, status: o.value } : { node: o.node, ok: false, error: o.error.detail, why: noStatus(o.error), code: o.error.code },
    );
    if (opts.watch !== undefined && !ctx.signal.aborted) {
      // Watch: poll every reachable node until all of it is idle; changes on stderr, the final state on stdout.
      const progress = new NodeProgress(ctx, run.nodes);
      for (const r of rows) {
        progress.onEvent({
          kind: 'state',
          node: r.node,
          at: ctx.now(),
          ...(r.ok
            ? { state: DATA_TYPES.some((t) => r.status[t].running) ? 'running' : 'idle', status: r.status }
            : { state: r.why === 'unreachable' ? 'unreachable' : 'failed', error: r.error }),
        });
      }
      try {
        rows = await Promise.all(
          rows.map(async (r, i): Promise<NodeStatus> => {
            if (!r.ok) return r;
            const res = await pollUntilIdle(clients[i]!, {
              intervalMs: opts.watch,
              lostAfterMs: opts.lostAfter,
              clock: watchClock(MIN_WATCH_MS),
              signal: ctx.signal,
              onEvent: (e) => progress.onEvent(e.kind === 'state' && e.state === 'done' ? { ...e, state: 'idle' } : e),
            });
            // no answer, or answers that were not a status, for --lost-after (the reason says which)
            if (res.state === 'lost' || res.state === 'unconfirmed') return { node: r.node, ok: false, error: res.reason, why: 'lost', code: res.state };
            return { node: r.node, ok: true, status: res.status ?? r.status };
          }),
        );
      } finally {
        progress.stop();
      }
    }
    const caughtUp = opts.untilCaughtUp && opts.watch !== undefined && !ctx.signal.aborted ? await waitCaughtUp(clients, opts.watch, ctx) : true;
    // After a watch the first lag is old news: read it again for the final table.
    if (opts.watch !== undefined && !ctx.signal.aborted) await fanOut(clients, readLag);
    print(
      ctx,
      opts,
      rows.map((r) => ({ ...r, lagSeconds: lags.get(r.node) ?? null })),
    );
    if (ctx.signal.aborted) ctx.log.warn('interrupted: stopped watching (sweeps keep running on their nodes)');
    const code = exitFor(rows, ctx);
    return code === EXIT.ok && !caughtUp ? EXIT.failed : code;
  } finally {
    await net.close();
  }
}
