/** How a local node's stop ended, as `cluster down`, `cluster up` and `demo` say it. */
import type { StopResult } from './state.js';

/** How a stop ended, in a table and in JSON. */
export const STOP_OUTCOME: Record<StopResult['outcome'], { text: string; json: string }> = {
  stopped: { text: 'stopped', json: 'stopped' },
  killed: { text: 'killed (did not stop after SIGTERM)', json: 'killed' },
  gone: { text: 'was not running', json: 'not_running' },
};

export function describeStop(r: StopResult): string {
  return `node ${r.index} ${r.url} (pid ${r.pid}) ${STOP_OUTCOME[r.outcome].text}`;
}
