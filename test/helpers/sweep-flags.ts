/** `tsnode sweep`'s own flags as the parser hands them over with their defaults, for planSweep's unit tests. */
import type { SweepFlags } from '../../src/cli/commands/sweep/plan.js';

export function sweepFlagsWith(over: Partial<SweepFlags>): SweepFlags {
  return {
    before: undefined,
    types: ['nnt'],
    nntRollups: undefined,
    histogramRollups: undefined,
    concurrency: 32,
    pollInterval: 2000,
    lostAfter: undefined,
    timeout: 21_600_000,
    wait: true,
    output: 'table',
    dryRun: false,
    yes: false,
    force: false,
    skipUnreachable: false,
    allowPartial: false,
    allowShortAge: false,
    allowLag: undefined,
    maxClockSkew: 300_000,
    journal: undefined,
    settle: 0,
    ...over,
  };
}
