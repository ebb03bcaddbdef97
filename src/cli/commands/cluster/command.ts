import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { InvalidValueError } from '../../errors.js';
import { addFlags, flag, type FlagValues } from '../../flags.js';

export const DEFAULT_CLUSTER_DIR = './tsnode-cluster';
export const DEFAULT_NODE_COUNT = 3;
export const MAX_CLUSTER_NODES = 64;

/**
 * The old `cluster up --nodes <n>` (and `demo --nodes <n>`): still read for one release, with a
 * warning, because `--nodes` is a node list everywhere else. A list given here is refused with a
 * pointer to --count, not read as a count.
 */
export function deprecatedNodeCount(max: number) {
  return flag.parsed(
    '--nodes <n>',
    'deprecated spelling of --count',
    (text, field) => {
      const t = text.trim();
      if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > max) {
        throw new InvalidValueError(field, text, `${JSON.stringify(text)} is not a node count (this command starts nodes; --nodes <n> is the old spelling of --count <n>)`, `use --count <n>, from 1 to ${max}`);
      }
      return Number(t);
    },
    { hidden: true, complete: { kind: 'none' } },
  );
}

export function clusterUpFlags() {
  return {
    count: flag.count('--count <n>', `how many nodes (default: ${DEFAULT_NODE_COUNT})`, { min: 1, max: MAX_CLUSTER_NODES, complete: { kind: 'none' } }),
    nodes: deprecatedNodeCount(MAX_CLUSTER_NODES),
    basePort: flag.count('--base-port <port>', 'port of the first node; the others count up from it; 0 = free ports', { default: '8112', max: 65535, complete: { kind: 'none' } }),
    dir: flag.string('--dir <dir>', 'where data dirs, logs, nodes.txt and cluster.json go', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    host: flag.string('--host <host>', 'address the nodes listen on', { default: '127.0.0.1', complete: { kind: 'none' } }),
    sweepPace: flag.duration('--sweep-pace <ms>', 'pause between units of sweep work on each node (makes progress visible); a bare number is milliseconds', {
      bareUnit: 'ms',
      min: 0,
      max: 60_000,
      complete: { kind: 'none' },
    }),
    lenientTimestamps: flag.boolean('--lenient-timestamps', 'every node also reads a bare integer start_ts/end_ts as .000 (for clients such as gosnowth)'),
    detach: flag.boolean('--detach', 'leave the nodes running in the background (stop with `tsnode cluster down`)'),
    writeCopies: flag.count('--write-copies <n>', 'copies of each metric the ring keeps, on that many different nodes (default: 2, or 1 for a single node)', {
      min: 1,
      max: 255,
      complete: { kind: 'none' },
    }),
    output: flag.output(),
  };
}
export type ClusterUpFlags = FlagValues<ReturnType<typeof clusterUpFlags>>;

export function clusterDownFlags() {
  return {
    dir: flag.string('--dir <dir>', 'the directory given to `cluster up`', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    grace: flag.duration('--grace <duration>', 'how long to wait after SIGTERM before SIGKILL', { default: '5s', max: 3_600_000 }),
    output: flag.output(),
  };
}
export type ClusterDownFlags = FlagValues<ReturnType<typeof clusterDownFlags>>;

/** `tsnode cluster up|down`: a local cluster of reference nodes, one process each. */
export function declareCluster(program: Command, runner: Runner): void {
  const cluster = program
    .command('cluster')
    .description('start or stop a local cluster of reference nodes (one `tsnode serve` process each)')
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster up                          3 nodes on ports 8112-8114 until Ctrl-C
  $ tsnode cluster up --detach --profile lab   keep running in the background; register it as profile lab
  $ tsnode status --profile lab
  $ tsnode cluster down                        stop a detached cluster`,
    );

  addFlags(
    cluster
      .command('up')
      .description('start N reference nodes as one ring, write <dir>/nodes.txt and <dir>/topology.json, and stay in the foreground until Ctrl-C (or --detach)'),
    clusterUpFlags(),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster up                                   ports 8112, 8113, 8114; Ctrl-C stops them
  $ tsnode cluster up --count 5 --base-port 9000 --dir /tmp/c5
  $ tsnode cluster up --detach --profile lab && tsnode status --profile lab
  $ tsnode cluster up --count 5 --write-copies 3 --detach && tsnode nodes --seed http://127.0.0.1:8112

Each node gets an identity (kept in its data dir, so a restarted ring keeps its ids) and runs with
<dir>/topology.json; stderr names the seed URL to discover the ring from (tsnode ... --seed URL).
stdout lists the nodes (-o json|csv for scripts); <dir>/nodes.txt holds their URLs, one per line.
--profile <name> (a global flag) registers the cluster as that profile (its nodes_file is
<dir>/nodes.txt; the profile's other settings stay), so later commands can say --profile <name>.`,
    )
    .action((flags: ClusterUpFlags) => runner(() => import('./action.js').then((m) => m.clusterUpAction), flags));

  addFlags(
    cluster.command('down').description('stop the cluster recorded in <dir>/cluster.json (SIGTERM, then SIGKILL after a grace period); safe to repeat'),
    clusterDownFlags(),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster down
  $ tsnode cluster down --dir /tmp/c5 --grace 1s`,
    )
    .action((flags: ClusterDownFlags) => runner(() => import('./action.js').then((m) => m.clusterDownAction), flags));
}
