import { Argument, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { completeWith } from '../../completion-hints.js';
import { EXIT_CODES_HELP } from '../../exit-codes.js';
import { addFlags } from '../../flags.js';
import { retentionPlanFlags, type RetentionPlanFlags, retentionApplyFlags, type RetentionApplyFlags, retentionVerifyFlags, type RetentionVerifyFlags } from './options.js';

const policyArgument = (): Argument => completeWith(new Argument('[policy]', 'the policy file: YAML (.yaml, .yml) or JSON (.json)'), { kind: 'files' });

/** `tsnode retention plan|apply`: declarations only; the work is in plan-action.ts and apply-action.ts. */
// Kept long: a declaration, most of it help text (the policy format, examples) read as printed.
export function declareRetention(program: Command, runner: Runner): void {
  const retention = program
    .command('retention')
    .description('retention policies: how long each type and span is kept, turned into safely sequenced sweeps on every node')
    .addHelpText(
      'after',
      `
A policy (YAML or JSON; the same as repeatable --rule):
  nnt:                 # numeric spans in seconds -> how long to keep them; "*" = every span not listed
    60: 30d
    300: 1y
  histogram:
    60: 30d
  text: 90d            # text has no spans
Ages: s, m, h, d, w, y (365 days). Spans the policy does not cover are kept forever.

Examples:
  $ tsnode retention plan retention.yaml --nodes nodes.txt
  $ tsnode retention apply retention.yaml --profile prod --yes
  $ tsnode retention apply --rule nnt:60=30d --rule 'nnt:*=1y' --rule text=90d --seed http://db1:8112
  $ tsnode retention apply --resume              continue the latest unfinished run (same cut-offs)
See docs/retention.md for the scheduling (cron, systemd) and the run files.`,
    );

  addFlags(
    retention
      .command('plan')
      .description("show the steps a policy makes and each node's exact requests; sends no DELETE (only GET /state to learn the spans)")
      .addArgument(policyArgument())
      .addHelpText(
        'after',
        `
"now" is pinned once; each step is one cut-off (newest first) with the types and spans whose rule
has that age. Spans are checked against each node's own (GET /state), else the profile's
nnt_rollups/histogram_rollups, else the plan says they could not be checked; an unknown span is an
error (exit 2). Output: a table, -o json (the plan document) or -o csv (one row per node and step).

Examples:
  $ tsnode retention plan retention.yaml --nodes nodes.txt
  $ tsnode retention plan --rule nnt:60=30d --rule text=90d -o json

Exit: 0 planned, 2 bad policy, flags or an unknown span (nothing is sent either way).`,
      ),
    retentionPlanFlags,
  ).action((policy: string | undefined, flags: RetentionPlanFlags) => runner(() => import('./plan-action.js').then((m) => m.retentionPlanAction), { ...flags, policy }));

  addFlags(
    retention
      .command('apply')
      .description('run a policy: per node its steps strictly one after another (DELETE, wait until idle, next); nodes independently')
      .addArgument(policyArgument())
      .addHelpText(
        'after',
        `
The same plan as "retention plan", then every node's sweep status: a node already sweeping is
refused (a policy never cancels a sweep, so there is no --force), an unreachable one too unless
--skip-unreachable. When the nodes expose a topology, a list that misses ring nodes, nodes that
disagree on the topology, or a rebalance in progress are refused unless --allow-partial. On a
terminal you are asked to confirm; otherwise --yes is required. A rule kept less than 1h
(nnt:*=1s) must be typed back on a terminal, and needs --allow-short-age off one. Then each node runs its steps: a
fresh status check, one DELETE, polls until idle, the next step. A node whose step ends in anything
but done runs no further steps; the others carry on.

Every step is journaled (tsnode history) and the run is saved in a run file before every DELETE
($XDG_STATE_HOME/tsnode/retention/<run>.json): after Ctrl-C, SIGTERM or a crash, running the same
command again continues it with the same cut-offs (--fresh starts anew); for nodes that stopped by
themselves it prints the catch-up command (--resume <run>). A step that may have reached a node is
re-checked by polling before anything is sent again.

Examples:
  $ tsnode retention apply retention.yaml --nodes nodes.txt
  $ tsnode retention apply /etc/tsnode/retention.yaml --profile prod --yes --output json
  $ tsnode retention apply --resume r-20261122T043258Z-3f2a --profile prod --yes

${EXIT_CODES_HELP}`,
      ),
    retentionApplyFlags,
  ).action((policy: string | undefined, flags: RetentionApplyFlags) => runner(() => import('./apply-action.js').then((m) => m.retentionApplyAction), { ...flags, policy }));

  addFlags(
    retention
      .command('verify')
      .description('check what every node holds against a policy: per node, type and span the oldest data, the cut-off and a verdict; read-only')
      .addArgument(policyArgument())
      .addHelpText(
        'after',
        `
Reads each node's shard inventories (GET /list_nntbs_shards, /raw/list_shards,
/histogram_raw/list_shards, /histogram/<period>/list_shards), whether it has a sweep API (else it
manages its own retention) and its /state. Sends no DELETE. Verdicts (scripts match on them):
  compliant       holds nothing older than the cut-off (a node-managed node: and its configured
                  retention equals the policy's)
  over_retained   holds shards lying entirely before the cut-off (how much older, how many)
  drift           a node-managed node whose configured retention differs from the policy's;
                  shorter is DANGEROUS: it deletes data the policy keeps
  cannot_verify   the node lists no inventories, or could not be read: the reason says why
The shard straddling the cut-off is expected: nodes remove whole shards, sweeps the records
inside them. Ring coverage is reported; nodes missing from the list are named, not refused.

Examples:
  $ tsnode retention verify retention.yaml --profile prod
  $ tsnode retention verify --rule nnt:60=30d --rule 'nnt:*=1y' --seed http://db1:8112 -o json

Exit: 0 every check compliant; 3 any over_retained or drift, some checks could not be verified,
or ring nodes are missing from the list; 2 bad policy or flags; 1 nothing could be verified.`,
      ),
    retentionVerifyFlags,
  ).action((policy: string | undefined, flags: RetentionVerifyFlags) => runner(() => import('./verify-action.js').then((m) => m.retentionVerifyAction), { ...flags, policy }));
}
