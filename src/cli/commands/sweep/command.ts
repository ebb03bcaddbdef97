import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { EXIT_CODES_HELP } from '../../exit-codes.js';
import { addNetworkOptions, addNodesOption } from '../../network-options.js';

/** `tsnode sweep` and `tsnode sweep cancel`: declarations only; the work is in action.ts. */
export function declareSweep(program: Command, runner: Runner): void {
  const sweep = program
    .command('sweep')
    .description('delete data older than a time on every node (DELETE /sweep_delete), then wait until every node is done')
    .option('--before <time>', 'delete everything strictly before this time: epoch, epoch.mmm, ISO-8601 with zone, or an age (90d, 12h, 1w)')
    .option('--types <list>', 'data types to delete: comma list of nnt, text, histogram', 'nnt')
    .option('--nnt-rollups <spans>', 'only these numeric spans, in seconds (e.g. 60,300); default all')
    .option('--histogram-rollups <spans>', 'only these histogram spans, in seconds; default all')
    .option('--header-prefix <prefix>', 'sweep header prefix: X-Service, or X-Snowth for production nodes', 'X-Service')
    .option('--concurrency <n>', 'requests in flight at once across the cluster', '32')
    .option('--poll-interval <duration>', 'time between status polls of a node', '2s')
    .option('--lost-after <duration>', 'a node silent this long while being polled is reported lost (default max(30s, 3 poll intervals))')
    .option('--timeout <duration>', 'stop waiting after this long (sweeps keep running on the nodes)', '6h')
    .option('--no-wait', 'send the deletes and exit without waiting (nodes reported as started)')
    .option('--dry-run', 'print each node\'s exact request and exit; sends nothing, not even the status check', false)
    .option('-y, --yes', 'do not ask for confirmation (required when not on a terminal)', false)
    .option('--force', 'sweep nodes that are already sweeping (their running sweep is cancelled and replaced)', false)
    .option('--skip-unreachable', 'leave out nodes that do not answer the status check (reported as skipped)', false)
    .option('--allow-partial', 'go ahead although the node list misses ring nodes, the nodes disagree on the topology, or a rebalance runs (the result lists the missing nodes)', false)
    .option('--journal <file>', 'append this run to this journal file (default $XDG_STATE_HOME/tsnode/sweeps.jsonl, else ~/.local/state/tsnode/sweeps.jsonl)')
    .addOption(new Option('--output <format>', 'result format on stdout').choices(['table', 'json']).default('table'));
  addNodesOption(sweep);
  addNetworkOptions(sweep);
  sweep.addHelpText(
    'after',
    `
Before anything is deleted every node is asked for its sweep status (GET /sweep_delete):
a node already sweeping is refused unless --force (a new DELETE would cancel its sweep),
and an unreachable node is refused unless --skip-unreachable. When the nodes expose a ring
topology (GET /state), a list that misses ring nodes (named), nodes that disagree on the
topology, or a rebalance in progress are refused unless --allow-partial; two URLs answering
as one node are always refused; --nnt-rollups/--histogram-rollups must be spans every node
reports. On a terminal you are asked to confirm; otherwise --yes is required. Each node gets
exactly one DELETE, never retried.

Examples:
  $ tsnode sweep --before 90d --nodes nodes.txt
  $ tsnode sweep --before 2026-08-24T00:00:00Z --types nnt,histogram --nnt-rollups 60,300 --yes
  $ tsnode sweep --before 1787529600 --dry-run --header-prefix X-Snowth --nodes db1:8112,db2:8112
  $ tsnode sweep --before 30d --no-wait --yes --output json    then: tsnode status --watch
  $ tsnode sweep cancel --nodes nodes.txt --yes

Every node ends in one state, with a one-line reason saying what it rests on:
  done         our sweep ran to the end: the node's record says so (reference node), or the
               node was seen idle with every poll answered and no other sweep seen
  started      --no-wait: the DELETE was answered [] and nobody watched further
  replaced     another sweep (other time, types or spans) took its place: named in the reason
  cancelled    a poll showed cancelling, or the node's record says cancelled
  failed       the DELETE was refused or answered with anything but [], or the sweep failed
  unconfirmed  idle after polls without an answer, or the node restarted: outcome unknown
  lost         stopped answering while polled; skipped: unreachable, --skip-unreachable;
  timed out    --timeout passed; interrupted: Ctrl-C (sweeps keep running on the nodes)
For every node not done it prints the command that repeats the same sweep on just those
nodes ("to catch up"). Each run is appended to a journal (see --journal; tsnode history).

${EXIT_CODES_HELP}`,
  );
  sweep.action((opts: Record<string, unknown>) => runner(() => import('./action.js').then((m) => m.sweepAction), opts as never));

  // `sweep cancel` takes its options from `sweep` itself (--nodes, --yes, --output and the network
  // options): commander parses the parent's known options wherever they appear, so declaring them
  // twice would leave the subcommand's copies at their defaults.
  sweep
    .command('cancel')
    .description('cancel running sweeps on every node (GET /sweep_delete/cancel)')
    .addHelpText(
      'after',
      `
Options (shared with sweep): --nodes <file|list>, --seed <url>, -y/--yes (required when not
on a terminal), --allow-partial, --output table|json, --journal <file>, --connect-timeout,
--request-timeout, --retries. The ring coverage check of sweep applies: a list that misses ring
nodes is refused (exit 2, nothing sent) unless --allow-partial.

Examples:
  $ tsnode sweep cancel --nodes nodes.txt
  $ tsnode sweep cancel --yes --output json

Exit: 0 every node answered, 3 some failed, 1 all failed, 2 refused or not confirmed (nothing sent).`,
    )
    .action((_opts: unknown, cmd: Command) => runner(() => import('./action.js').then((m) => m.sweepCancelAction), cmd.parent!.opts() as never));
}
