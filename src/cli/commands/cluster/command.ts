import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';

export interface ClusterUpFlags {
  nodes: string;
  basePort: string;
  dir: string;
  host: string;
  sweepPace?: string;
  lenientTimestamps?: boolean;
  detach: boolean;
  /** Copies of each metric the ring keeps (default 2 with at least 2 nodes, else 1). */
  writeCopies?: string;
}

export interface ClusterDownFlags {
  dir: string;
  grace: string;
}

export const DEFAULT_CLUSTER_DIR = './tsnode-cluster';

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
  $ tsnode cluster up --detach --base-port 0   free ports, keep running in the background
  $ tsnode status --nodes tsnode-cluster/nodes.txt
  $ tsnode cluster down                        stop a detached cluster`,
    );

  cluster
    .command('up')
    .description('start N reference nodes as one ring, write <dir>/nodes.txt and <dir>/topology.json, and stay in the foreground until Ctrl-C (or --detach)')
    .addOption(new Option('--nodes <n>', 'how many nodes').default('3'))
    .addOption(new Option('--base-port <port>', 'port of the first node; the others count up from it; 0 = free ports').default('8112'))
    .addOption(new Option('--dir <dir>', 'where data dirs, logs, nodes.txt and cluster.json go').default(DEFAULT_CLUSTER_DIR))
    .addOption(new Option('--host <host>', 'address the nodes listen on').default('127.0.0.1'))
    .option('--sweep-pace <ms>', 'pause between units of sweep work on each node (makes progress visible)')
    .option('--lenient-timestamps', 'every node also reads a bare integer start_ts/end_ts as .000 (for clients such as gosnowth)')
    .option('--detach', 'leave the nodes running in the background (stop with `tsnode cluster down`)', false)
    .option('--write-copies <n>', 'copies of each metric the ring keeps, on that many different nodes (default: 2, or 1 for a single node)')
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster up                                   ports 8112, 8113, 8114; Ctrl-C stops them
  $ tsnode cluster up --nodes 5 --base-port 9000 --dir /tmp/c5
  $ tsnode cluster up --detach && tsnode status --nodes tsnode-cluster/nodes.txt
  $ tsnode cluster up --nodes 5 --write-copies 3 --detach && tsnode nodes --seed http://127.0.0.1:8112

Each node gets an identity (kept in its data dir, so a restarted ring keeps its ids) and runs with
<dir>/topology.json; stderr names the seed URL to discover the ring from (tsnode ... --seed URL).
stdout is the node list (one URL per line), the same as <dir>/nodes.txt.`,
    )
    .action((flags: ClusterUpFlags) => runner(() => import('./action.js').then((m) => m.clusterUpAction), flags));

  cluster
    .command('down')
    .description('stop the cluster recorded in <dir>/cluster.json (SIGTERM, then SIGKILL after a grace period); safe to repeat')
    .addOption(new Option('--dir <dir>', 'the directory given to `cluster up`').default(DEFAULT_CLUSTER_DIR))
    .addOption(new Option('--grace <duration>', 'how long to wait after SIGTERM before SIGKILL').default('5s'))
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster down
  $ tsnode cluster down --dir /tmp/c5 --grace 1s`,
    )
    .action((flags: ClusterDownFlags) => runner(() => import('./action.js').then((m) => m.clusterDownAction), flags));
}
