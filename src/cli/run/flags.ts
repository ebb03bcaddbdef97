/**
 * Flags every destructive run (sweep, retention apply, delete) declares alike. Light on purpose:
 * the commands' options.ts import it, and a declaration loads nothing heavy (test/cli/startup.test.ts).
 */
import { flag } from '../flags.js';

/** `--allow-lag`: the replication-lag preflight's flag, the same for sweep and retention apply. */
export function allowLagFlag() {
  return flag.duration(
    '--allow-lag <duration>',
    'a replicating ring: sweep nodes whose replication is behind by at most this much (default: refuse while any data is in flight towards a swept node)',
  );
}
