/** `--account`: the account a metric query selects, for the commands that select metrics (find, delete). */
import { flag } from './flags.js';

/** `--account <id>`, sent as X-Snowth-Account-Id. */
export function accountFlag() {
  return flag.count('--account <id>', "the account whose metrics the query selects, sent as X-Snowth-Account-Id (default: 1, a reference node's default)", {
    min: 0,
    complete: { kind: 'none' },
  });
}
