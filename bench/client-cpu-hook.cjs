// A `--require` for a client process the benchmarks time: as it exits, it writes its own CPU time
// (user + system, in microseconds) to the file named by TSNODE_BENCH_CPU. CommonJS, so that it
// does not start Node's ES module loader, which the bundled CLI itself never starts.
const file = process.env.TSNODE_BENCH_CPU;
if (file) {
  process.on('exit', () => {
    const u = process.cpuUsage();
    require('node:fs').writeFileSync(file, String(u.user + u.system));
  });
}
