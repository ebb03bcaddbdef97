import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import {
  clusterUpFlags,
  type ClusterUpFlags,
  clusterDownFlags,
  type ClusterDownFlags,
  clusterReplicationFlags,
  type ClusterReplicationFlags,
  clusterRestartFlags,
  type ClusterRestartFlags,
} from './options.js';

/** `tsnode cluster up|down`: a local cluster of reference nodes, one process each. */
// Kept long: a declaration of four subcommands and their help text, read as `--help` prints it.
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
    cluster.command('up').description('start N reference nodes as one ring, write <dir>/nodes.txt and <dir>/topology.json, and stay in the foreground until Ctrl-C (or --detach)'),
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

  addFlags(cluster.command('down').description('stop the cluster recorded in <dir>/cluster.json (SIGTERM, then SIGKILL after a grace period); safe to repeat'), clusterDownFlags())
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster down
  $ tsnode cluster down --dir /tmp/c5 --grace 1s`,
    )
    .action((flags: ClusterDownFlags) => runner(() => import('./action.js').then((m) => m.clusterDownAction), flags));

  addFlags(
    cluster
      .command('restart')
      .description('stop and start one node of a local cluster (or every node, one at a time) on its recorded port, with its data, identity and flags')
      .argument('[node]', 'the node: its id, its URL, or its number in `cluster up` order (default: every node)'),
    clusterRestartFlags(),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ tsnode cluster restart 2
  $ tsnode cluster restart http://127.0.0.1:8113 --dir /tmp/c5
  $ tsnode cluster restart                       every node, one after the other

A node that does not run is started; a restarted node runs in the background, and
\`cluster down\` stops it with the others. (\`cluster up\` on the same --dir starts only the
nodes that do not run.)`,
    )
    .action((node: string | undefined, flags: ClusterRestartFlags) => runner(() => import('./restart.js').then((m) => m.clusterRestartAction), { ...flags, node }));

  for (const paused of [true, false]) {
    const verb = paused ? 'pause' : 'resume';
    addFlags(
      cluster
        .command(verb)
        .description(
          paused
            ? 'stop replication towards one node of a local ring from every other node until resumed, across restarts (their journals keep its records)'
            : 'restart replication towards one node of a local ring from every other node (it receives the backlog)',
        )
        .argument('<node>', 'the node: its id, its URL, or its number in `cluster up` order'),
      clusterReplicationFlags(),
    )
      .addHelpText(
        'after',
        `
Examples:
  $ tsnode cluster ${verb} 2
  $ tsnode cluster ${verb} http://127.0.0.1:8113 --dir /tmp/c5 -o json

Exit: 0 every other node confirmed, 3 some did, 1 none did, 2 no such node or cluster.`,
      )
      .action((node: string, flags: ClusterReplicationFlags) => runner(() => import('./replication.js').then((m) => m.clusterReplicationAction), { ...flags, node, paused }));
  }
}
