import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { EXIT_CODES_HELP } from '../../exit-codes.js';
import { UsageError } from '../../errors.js';
import { addFlags } from '../../flags.js';
import { networkFlags } from '../../network-options.js';
import { sweepFlags, type SweepOptions, CANCEL_FLAGS, type CancelOptions } from './options.js';

/**
 * The sweep-only flags given on the command line of `sweep cancel`: they would be read and
 * ignored (`sweep cancel --before 1d` cancels every sweep, whatever its time), so they are refused.
 */
export function sweepOnlyFlagsGiven(sweep: Command): string[] {
  const cancelKeys = new Set<string>([...CANCEL_FLAGS, ...Object.keys(networkFlags())]);
  return sweep.options.filter((o) => !cancelKeys.has(o.attributeName()) && sweep.getOptionValueSource(o.attributeName()) === 'cli').map((o) => o.long ?? o.flags);
}

/** `tsnode sweep` and `tsnode sweep cancel`: declarations only; the work is in action.ts and cancel-action.ts. */
export function declareSweep(program: Command, runner: Runner): void {
  const sweep = program.command('sweep').description('delete data older than a time on every node (DELETE /sweep_delete), then wait until every node is done');
  addFlags(sweep, sweepFlags());
  sweep.addHelpText(
    'after',
    `
The nodes: --nodes, --seed, --profile, $TSNODE_NODES, $TSNODE_PROFILE or the current profile;
never ./nodes.txt or the default node (no node list: exit 2, nothing sent). stderr says where
they came from, and so does the confirmation prompt and the journal.

Before anything is deleted every node is asked for its sweep status (GET /sweep_delete):
a node already sweeping is refused unless --force (a new DELETE would cancel its sweep),
and an unreachable node is refused unless --skip-unreachable. When the nodes expose a ring
topology (GET /state), a list that misses ring nodes (named), nodes that disagree on the
topology, or a rebalance in progress are refused unless --allow-partial; two URLs answering
as one node are always refused; --nnt-rollups/--histogram-rollups must be spans every node
reports (a node that reports none is checked against the profile's nnt_rollups and
histogram_rollups, when it declares them). On a terminal you are asked to confirm; otherwise
--yes is required. Each node gets exactly one DELETE, never retried.

Examples:
  $ tsnode sweep --before 90d --profile prod
  $ tsnode sweep --before 2026-08-24T00:00:00Z --types nnt,histogram --nnt-rollups 60,300 --yes
  $ tsnode sweep --before 1787529600 --dry-run --header-prefix X-Snowth --nodes db1:8112,db2:8112
  $ tsnode sweep --before 30d --no-wait --yes -o json    then: tsnode status --watch
  $ tsnode sweep cancel --profile prod --yes

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
  sweep.action((opts: SweepOptions) => runner(() => import('./action.js').then((m) => m.sweepAction), opts));

  sweep
    .command('cancel')
    .description('cancel running sweeps on every node (GET /sweep_delete/cancel)')
    .addHelpText(
      'after',
      `
Options (declared on sweep, see tsnode sweep --help): the node source (--nodes, --seed,
--profile; never ./nodes.txt or the default node), -y/--yes (required when not on a terminal),
--dry-run (list the requests, send nothing), --allow-partial, -o/--output table|json|csv,
--journal <file>, --metrics-file <path>, --concurrency and the network options. The flags that only a sweep reads
(--before, --types, --force, ...) are refused. The ring coverage check of sweep applies: a list
that misses ring nodes is refused (exit 2, nothing sent) unless --allow-partial.

Examples:
  $ tsnode sweep cancel --nodes nodes.txt
  $ tsnode sweep cancel --profile prod --yes -o json

Exit: 0 every node answered, 3 some failed, 1 all failed, 2 refused or not confirmed (nothing sent).`,
    )
    .action((_opts: unknown, cmd: Command) => {
      const sweepCmd = cmd.parent!;
      const stray = sweepOnlyFlagsGiven(sweepCmd);
      if (stray.length) {
        throw new UsageError(
          `${stray.join(', ')}: ${stray.length === 1 ? 'an option' : 'options'} of tsnode sweep, not of tsnode sweep cancel (nothing was sent)`,
          'sweep cancel cancels whatever sweep runs on each node; drop them (tsnode sweep cancel --help lists what it reads)',
        );
      }
      return runner(() => import('./cancel-action.js').then((m) => m.sweepCancelAction), sweepCmd.opts<SweepOptions>() as CancelOptions);
    });
}
