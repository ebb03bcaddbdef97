// Shared by the benchmarks that run a node as a child process (not a benchmark itself: run.mjs
// runs *.bench.mjs only).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** CPU seconds (user + system) process `pid` has used so far (Linux /proc; NaN elsewhere). */
export function cpuSecondsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * Seconds the main thread of process `pid` has run, and has waited runnable for a CPU (Linux
 * /proc schedstat; NaN elsewhere). The wait is what a process loses to others on a busy machine.
 */
export function mainThreadSchedOf(pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { run: run / 1e9, wait: wait / 1e9 };
  } catch {
    return { run: NaN, wait: NaN };
  }
}

/**
 * A `--require` for a client process: as it exits, it writes its own CPU time (user + system, in
 * microseconds) to the file named by TSNODE_BENCH_CPU (client-cpu-hook.cjs: CommonJS, so the
 * client does not start Node's ES module loader for it, which the bundled CLI never starts).
 */
export const CLIENT_CPU_HOOK = fileURLToPath(new URL('./client-cpu-hook.cjs', import.meta.url));
