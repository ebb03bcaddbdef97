// Shared by the benchmarks that run a node as a child process (not a benchmark itself: run.mjs
// runs *.bench.mjs only).
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) process `pid` has used so far (Linux /proc; NaN elsewhere). */
export function cpuSecondsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}
