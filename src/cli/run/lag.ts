/**
 * The replication-lag preflight and the unreachable-node choice as every destructive run
 * (sweep, retention apply, delete) reads them from its flags and its profile, and says them.
 */
import { describeLag, hasLag, type LagReport } from '../../client/replication-lag.js';
import type { ResolvedTarget } from '../config/target.js';
import type { CliContext } from '../context.js';
import { formatDuration } from '../values.js';

/** `--skip-unreachable`, else the profile's `skip_unreachable: true` (said on stderr, with where it is set). */
export function skipUnreachableOf(flag: boolean, target: Pick<ResolvedTarget, 'skipUnreachable'>, ctx: Pick<CliContext, 'log'>): boolean {
  if (flag) return true;
  if (target.skipUnreachable?.value !== true) return false;
  ctx.log.info(`skip_unreachable from ${target.skipUnreachable.from}: nodes that do not answer are left out (listed as skipped)`);
  return true;
}

/** The replication lag a run accepts: `--allow-lag`, else the profile's `allow_lag`; with where it came from. */
export function lagAllowance(flagMs: number | undefined, target: Pick<ResolvedTarget, 'allowLag'>): { ms: number; from: string } | undefined {
  if (flagMs !== undefined) return { ms: flagMs, from: '--allow-lag' };
  return target.allowLag ? { ms: target.allowLag.value, from: target.allowLag.from } : undefined;
}

/** The replication options of the run core for an allowance (lagAllowance), reporting what was read to `onReport`. */
export function replicationLagOption(allowed: { ms: number } | undefined, onReport: (r: LagReport) => void): { allowLagSeconds?: number; onReport: (r: LagReport) => void } {
  return { ...(allowed !== undefined ? { allowLagSeconds: allowed.ms / 1000 } : {}), onReport };
}

/** Lines for stderr after the lag check: each node data is in flight to (a sweep that goes ahead: --allow-lag or allow_lag), or that it could not be checked. */
export function logLag(ctx: Pick<CliContext, 'log'>, report: LagReport | undefined, allowed: { ms: number; from: string } | undefined): void {
  if (!report) return;
  if (!report.checked) {
    ctx.log.info('replication lag: not reported by the nodes (no max_peer_lag, no /replication/json, no lag in /gossip/json): not checked');
    return;
  }
  const going = allowed ? `${allowed.from === '--allow-lag' ? '--allow-lag' : `allow_lag from ${allowed.from}`} ${formatDuration(allowed.ms)}` : '--allow-lag 0s';
  for (const n of report.nodes.filter(hasLag)) ctx.log.warn(`${n.node}: replication ${describeLag(n)} (going ahead: ${going})`);
}
