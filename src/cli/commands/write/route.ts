/**
 * Where a write goes, decided before anything is sent: `--to owners` (each record to its owners on
 * the ring the nodes run; the default when they run one), `any` or `all` (the list as it is), and
 * the smallest span the records' offsets must sit on (`--smallest-span`, else the nodes'
 * `base_rollup`). What was decided is one line on stderr; what cannot work is a usage error
 * (exit 2, nothing sent).
 */
import type { DiscoveredRing } from '../../../client/discovery.js';
import type { NodeClient } from '../../../client/node-client.js';
import { surveyNodes, writeSpan, type NodeSurvey, type RingTargets } from '../../../client/routing.js';
import type { Target } from '../../../replay/index.js';
import type { Ring } from '../../../ring/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Network } from '../../network.js';
import { parseCount } from '../../network.js';

/** The smallest span when neither the flag nor the nodes say (the store's default smallest period). */
export const DEFAULT_SMALLEST_SPAN = 60;

export interface WriteRoute {
  to: Target;
  /** The clients the replay writes through: the ring's nodes in topology order for `owners`, else the list. */
  clients: NodeClient[];
  /** With `owners`: the ring. */
  ring?: Ring;
  targets?: RingTargets;
  smallestSpan: number;
  spanFrom: 'flag' | 'nodes' | 'default';
}

const short = (hash: string): string => hash.slice(0, 12);

/** Decides the target and the span; logs one line saying so (and warnings for what looks wrong). */
export async function planWriteRoute(
  flags: { to?: string | undefined; smallestSpan?: string | undefined },
  nodes: readonly string[],
  ctx: CliContext,
  net: Network,
  seeded: DiscoveredRing | undefined,
): Promise<WriteRoute> {
  const explicitTo = flags.to as Target | undefined;
  const spanFlag = flags.smallestSpan === undefined ? undefined : parseCount(flags.smallestSpan, '--smallest-span', 1);
  const listed = nodes.map((n) => net.client(n));
  const wantRing = explicitTo === undefined || explicitTo === 'owners';
  let survey: NodeSurvey | undefined;
  if (wantRing || spanFlag === undefined) {
    survey = await surveyNodes(listed, {
      clientFor: net.client,
      call: { signal: net.signal },
      ...(seeded ? { seeded } : {}),
      // A seeded ring needs no asking unless the spans are wanted.
      probe: seeded === undefined || spanFlag === undefined,
      followRing: wantRing,
    });
  }
  const targets = survey?.targets ?? null;
  if (explicitTo === 'owners' && !targets) {
    throw new UsageError(`--to owners: ${survey?.noRing ?? 'the nodes run no ring'} (nothing was sent)`, 'run the nodes with a topology (tsnode cluster up; tsnode serve --topology) and point --seed at one, or write with --to any or --to all');
  }
  const to: Target = explicitTo ?? (targets ? 'owners' : 'any');
  const parts: string[] = [];
  if (to === 'owners') {
    const r = targets!.ring;
    parts.push(`--to owners: each record to its ${r.topology.writeCopies} owner${r.topology.writeCopies === 1 ? '' : 's'} on ring ${short(r.hash)} (${r.nodes.length} nodes)`);
  } else if (explicitTo === undefined) {
    parts.push(`--to any: ${survey!.noRing}; each batch goes to one node`);
  }

  const clients = to === 'owners' ? targets!.clients : listed;
  let smallestSpan: number;
  let spanFrom: WriteRoute['spanFrom'];
  if (spanFlag !== undefined) {
    smallestSpan = spanFlag;
    spanFrom = 'flag';
    const dest = destinations(to, survey, listed);
    const off = dest.filter((d) => d.self?.baseRollup != null && spanFlag % d.self.baseRollup !== 0);
    if (off.length > 0) {
      ctx.log.warn(`--smallest-span ${spanFlag}: not a multiple of the smallest span of ${off.map((d) => `${d.url} (${d.self!.baseRollup}s)`).join(', ')}: the node will refuse records whose offsets are not on its span`);
    }
  } else {
    const decided = writeSpan(destinations(to, survey, listed));
    if (decided.kind === 'disagree') {
      throw new UsageError(
        `the nodes disagree on their smallest span (base_rollup): ${decided.spans.map((s) => `${s.span}s on ${s.nodes.join(', ')}`).join('; ')} (nothing was sent)`,
        'write to nodes that share one smallest span, or pass --smallest-span to check offsets against one you choose',
      );
    }
    if (decided.kind === 'agreed') {
      smallestSpan = decided.span;
      spanFrom = 'nodes';
      parts.push(`smallest span ${smallestSpan}s (the nodes' base_rollup${decided.unreported.length ? `; not reported by ${decided.unreported.join(', ')}` : ''})`);
    } else {
      smallestSpan = DEFAULT_SMALLEST_SPAN;
      spanFrom = 'default';
      parts.push(`smallest span ${smallestSpan}s, the default: the nodes do not report theirs (base_rollup in GET /state)`);
    }
  }
  if (parts.length > 0) {
    if (to === 'any' && explicitTo === undefined && survey?.noRingKind === 'mixed') ctx.log.warn(parts.join('; '));
    else ctx.log.info(parts.join('; '));
  }
  if (to === 'owners') {
    const t = targets!;
    if (t.unlisted.length > 0) {
      ctx.log.info(`ring nodes the list does not name are written at their ring address: ${t.unlisted.map((n) => n.url).join(', ')}`);
    }
  }
  for (const note of survey?.notes ?? []) ctx.log.warn(note);
  return { to, clients, ...(to === 'owners' ? { ring: targets!.ring.ring, targets: targets! } : {}), smallestSpan, spanFrom };
}

/** The nodes a write goes to, with what each said about itself (null: not asked, or no answer). */
function destinations(to: Target, survey: NodeSurvey | undefined, listed: readonly NodeClient[]): Array<{ url: string; self: NonNullable<NodeSurvey['listed'][number]['self']> | null }> {
  if (!survey) return listed.map((c) => ({ url: c.url, self: null }));
  if (to === 'owners' && survey.targets) return survey.targets.clients.map((c, k) => ({ url: c.url, self: survey.targets!.selves[k] ?? null }));
  if (survey.listed.length === listed.length) return survey.listed.map((p) => ({ url: p.url, self: p.self }));
  return listed.map((c) => ({ url: c.url, self: null }));
}
