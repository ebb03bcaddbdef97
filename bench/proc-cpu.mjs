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

/**
 * A `--import` for a client process: as it exits, it writes its own CPU time (user + system, in
 * microseconds) to the file named by TSNODE_BENCH_CPU.
 */
export const CLIENT_CPU_HOOK =
  'data:text/javascript,import{writeFileSync}from"node:fs";process.on("exit",()=>{const u=process.cpuUsage();writeFileSync(process.env.TSNODE_BENCH_CPU,String(u.user+u.system))})';
