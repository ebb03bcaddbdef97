/**
 * What a finished delete run means, node by node: its state from the dry run, what the node said
 * it deleted and the after-look (client/tag-delete.ts proveGone), the per-metric receipt, the exit
 * code (run/outcome.ts's rule) and the catch-up command that repeats the delete where it is not
 * proven done.
 */
import { metricKey, proveGone, type MetricKey, type NodeDeletion, type NodeLook, type TagDeleteRequest } from '../client/tag-delete.js';
import { DEFAULT_TAG_ADVISORY_LIMIT } from '../protocol/index.js';
import { catchUpIsPartial, shellQuote, type CarriedFlags, type CatchUp, type RunCoverage } from './catch-up.js';
import { runExitCode, type RunExitCode } from './outcome.js';

/** What a delete run asks of every node (the CLI's plan, or a script's). */
export interface DeleteSpec {
  /** One request per data type for a time-bounded delete; one for a full delete. */
  requests: TagDeleteRequest[];
  /** One exact metric (its full delete goes to /full/canonical); its query selects only it. */
  metric: { uuid: string; metric: string } | null;
  /** The query as typed (with `metric`: the one built to look for it). */
  query: string;
  account: number;
  /** The advisory limit of each confirmed call. */
  batch: number;
  maxRounds: number;
  /** Most metrics one node lists in the dry run and the after-look. */
  listLimit: number;
  concurrency: number;
}

/** One node's outcome, as the result and the journal's receipt carry it (snake_case in JSON). */
export interface NodeOutcome {
  node: string;
  /** `deleted` (all proven gone), `nothing` (nothing to delete), `partial`, `failed`, `skipped`, `unconfirmed`, `interrupted`. */
  state: 'deleted' | 'nothing' | 'partial' | 'failed' | 'skipped' | 'unconfirmed' | 'interrupted';
  reason: string;
  /** Metrics the dry run found with data (per type for a time-bounded delete). */
  found: number;
  deleted: number;
  rounds: number;
  /** Deleted metrics the after-look shows gone. */
  gone: number;
  reappeared: MetricKey[];
  remaining: MetricKey[];
  /**
   * Per metric: its status in the dry run and what is known after: `gone` (the after-look proves
   * it), `reappeared`, `not deleted`, `deleted` (the node said so; not looked at again), `unknown`
   * (nothing said and nothing looked at), or the dry run's status when it had no data to delete.
   */
  metrics: Array<{ type?: string; uuid: string; metric_name: string; before: string; after: string }>;
}

const typeOf = (req: TagDeleteRequest): string | undefined => (req.scope.kind === 'before' ? req.scope.type : undefined);

/** Metrics with data the dry run found on `node`, over every request. */
export const foundOn = (looks: NodeLook[][], node: string): number =>
  looks.reduce((n, perNode) => n + (perNode.find((l) => l.node === node)?.metrics.filter((m) => m.status === 'found').length ?? 0), 0);

/** What the run saw and did on every node, for `judgeNodes`. */
export interface DeleteEvidence {
  /** The dry run each node's delete was judged against (the second look's, after a confirmation). */
  before: NodeLook[][];
  /** Nodes left out (unreachable, a failed dry run), with why. */
  skipped: ReadonlyArray<{ node: string; error: string }>;
  /** Per request, each target's loop. */
  deletions: NodeDeletion[][];
  /** Per request, each target's after-look; undefined when the run was interrupted (no look was made). */
  after: NodeLook[][] | undefined;
}

function receiptRows(before: NodeLook, d: NodeDeletion, proof: ReturnType<typeof proveGone> | undefined, type?: string): NodeOutcome['metrics'] {
  const back = new Set(proof?.reappeared.map(metricKey));
  const left = new Set(proof?.remaining.map(metricKey));
  const said = new Set(d.deleted.map(metricKey));
  const proven = proof !== undefined && !proof.unconfirmed;
  return before.metrics.map((m) => {
    const key = metricKey(m);
    let after: string = m.status;
    if (back.has(key)) after = 'reappeared';
    else if (left.has(key)) after = 'not deleted';
    else if (m.status === 'found') after = proven ? 'gone' : said.has(key) ? 'deleted' : 'unknown';
    return { ...(type ? { type } : {}), uuid: m.uuid, metric_name: m.metric, before: m.status, after };
  });
}

/** One node's outcome from its dry run, its loops and its after-looks. */
function judgeNode(node: string, spec: DeleteSpec, ev: DeleteEvidence): NodeOutcome {
  const base: NodeOutcome = { node, state: 'nothing', reason: '', found: foundOn(ev.before, node), deleted: 0, rounds: 0, gone: 0, reappeared: [], remaining: [], metrics: [] };
  const skip = ev.skipped.find((s) => s.node === node);
  if (skip) return { ...base, state: 'skipped', reason: `unreachable: ${skip.error}` };
  const problems: string[] = [];
  let interrupted = false;
  spec.requests.forEach((req, r) => {
    const d = ev.deletions[r]?.find((x) => x.node === node);
    if (!d) return;
    const b = ev.before[r]!.find((x) => x.node === node)!;
    const a = ev.after?.[r]?.find((x) => x.node === node);
    const proof = a ? proveGone(d, a, b) : undefined;
    base.deleted += d.deleted.length;
    base.rounds += d.rounds;
    base.gone += proof?.gone ?? 0;
    base.reappeared.push(...(proof?.reappeared ?? []));
    base.remaining.push(...(proof?.remaining ?? []));
    base.metrics.push(...receiptRows(b, d, proof, typeOf(req)));
    if (d.end === 'interrupted') interrupted = true;
    else if (d.end !== 'complete') problems.push(d.end === 'failed' ? `failed: ${d.error ?? ''}` : d.end.replace('_', ' '));
    if (proof?.unconfirmed) problems.push(`unconfirmed: ${proof.unconfirmed}`);
  });
  // Interrupted: no after-look was made, so nothing is proven; the node's own answers say what went.
  const said = `${base.deleted} deleted of ${base.found} found`;
  const also = problems.length ? ` (${problems.join('; ')})` : '';
  if (interrupted) return { ...base, state: 'interrupted', reason: `interrupted after ${said}; not looked at again${also}` };
  if (ev.after === undefined && base.found + base.deleted > 0) return { ...base, state: 'unconfirmed', reason: `${said}; not looked at again (the run was interrupted)${also}` };
  if (base.found === 0 && base.deleted === 0) return base;
  if (base.reappeared.length) problems.push(`${base.reappeared.length} reappeared`);
  if (base.remaining.length) problems.push(`${base.remaining.length} remaining`);
  // A call that failed after the node did its work (a lost answer) is no failure when the after-look proves everything gone.
  const proven = base.remaining.length === 0 && base.reappeared.length === 0 && base.gone >= base.found && !problems.some((p) => p.startsWith('unconfirmed'));
  if (problems.length === 0 || (proven && problems.every((p) => p.startsWith('failed')))) {
    const lost = problems.length ? ` (${problems.join('; ')}; the after-look proves every metric gone)` : '';
    return { ...base, state: 'deleted', reason: `every deleted metric answers no content or not found${lost}` };
  }
  const state = problems.some((p) => p.startsWith('unconfirmed')) && base.gone > 0 ? 'unconfirmed' : base.deleted === 0 && base.gone === 0 ? 'failed' : 'partial';
  return { ...base, state, reason: problems.join('; ') };
}

/** One outcome per node of the run, in the run's order. */
export function judgeNodes(nodes: readonly string[], spec: DeleteSpec, ev: DeleteEvidence): NodeOutcome[] {
  return nodes.map((node) => judgeNode(node, spec, ev));
}

/**
 * The exit code (run/outcome.ts's rule over the nodes that had something to delete): 0 all
 * proven done, 1 none deleted anything, 3 some (a node `partial` counts as some), 130 interrupted.
 * Ring nodes left out with --allow-partial (`notSwept`) count as not done, as for sweeps.
 */
export function deleteExitCode(outcomes: readonly NodeOutcome[], interrupted: boolean, notSwept = 0): RunExitCode {
  // With ring nodes left out, a node with nothing to delete is a part of the ring that is done (as a swept node is).
  const asked = outcomes.filter((o) => o.state !== 'nothing' || notSwept > 0);
  const good = asked.filter((o) => o.state === 'deleted' || o.state === 'nothing').length;
  const code = runExitCode({ good, total: asked.length, notSwept, interrupted });
  return code === 1 && asked.some((o) => o.state === 'partial') ? 3 : code;
}

/** The nodes a catch-up repeats the delete on: every node not proven done. */
export const notDeleted = (outcomes: readonly NodeOutcome[]): string[] => outcomes.filter((o) => o.state !== 'deleted' && o.state !== 'nothing').map((o) => o.node);

/**
 * The command that repeats this delete on `nodes`, to run as printed: the query (or --metric), the
 * scope with the resolved epoch, the account, the batch, --allow-partial when a ring's coverage
 * check would otherwise refuse a list of fewer nodes, and the carried flags (--profile, TLS files,
 * --journal, --yes when the run had it). Header values are named in `addBack`, never printed.
 */
export function deleteCatchUp(
  spec: DeleteSpec,
  nodes: readonly string[],
  runNodes: number,
  coverage: RunCoverage | null | undefined,
  flags: CarriedFlags = { carry: [], addBack: [] },
): CatchUp | undefined {
  if (nodes.length === 0) return undefined;
  const args = ['tsnode', 'delete'];
  if (spec.metric) args.push('--metric', spec.metric.uuid, spec.metric.metric);
  else args.push(spec.query);
  const first = spec.requests[0]!.scope;
  if (first.kind === 'full') args.push('--full');
  else args.push('--before', String(first.before), '--types', spec.requests.map((r) => typeOf(r)).join(','));
  if (spec.account !== 1) args.push('--account', String(spec.account));
  // The store's default advisory limit is what a catch-up without --batch sends.
  if (spec.batch !== DEFAULT_TAG_ADVISORY_LIMIT) args.push('--batch', String(spec.batch));
  args.push('--nodes', nodes.join(','));
  if (catchUpIsPartial(coverage, nodes.length, runNodes)) args.push('--allow-partial');
  args.push(...flags.carry);
  return { nodes: [...nodes], command: args.map(shellQuote).join(' '), addBack: [...flags.addBack] };
}
