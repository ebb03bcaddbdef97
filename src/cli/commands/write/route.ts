/**
 * Where a write goes, decided before anything is sent: `--to primary` (each record once to its
 * primary owner on the ring the nodes run, the next owner when it fails; the default when they run
 * one), `owners` (each record to every owner: for stores that do not replicate), `any` or `all` (the list as it is), and
 * what records are checked against: for numeric records the smallest span their offsets must sit
 * on (`--smallest-span`, else the nodes' `base_rollup`, else the profile's `smallest_span`, else
 * 60), for histogram records the periods they may carry (the nodes' histogram rollups, else the
 * profile's `histogram_rollups`, else unchecked). Text records are placed by the same key and
 * checked against nothing the nodes report. What was decided is one line on stderr; what cannot
 * work is a usage error (exit 2, nothing sent).
 */
import type { DiscoveredRing, NodeSelf } from '../../../client/discovery.js';
import type { NodeClient } from '../../../client/node-client.js';
import { surveyNodes, writeSpan, type NodeSurvey, type RingTargets } from '../../../client/routing.js';
import type { RecordKind } from '../../../records/kinds.js';
import type { WriteTarget } from '../../../replay/index.js';
import type { Ring } from '../../../ring/index.js';
import type { ResolvedTarget } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Network } from '../../network.js';

/** The smallest span when neither the flag, the nodes nor the profile say (the store's default smallest period). */
export const DEFAULT_SMALLEST_SPAN = 60;

export interface WriteRoute {
  to: WriteTarget;
  /** The clients the replay writes through: the ring's nodes in topology order for `owners`, else the list. */
  clients: NodeClient[];
  /** With `owners`: the ring. */
  ring?: Ring;
  targets?: RingTargets;
  /** Numeric records: the span offsets must sit on, and where it came from (absent for other kinds). */
  smallestSpan?: { seconds: number; from: 'flag' | 'nodes' | 'profile' | 'default' };
  /** Histogram records: the periods a record may carry (null: unchecked), and where they came from (absent for other kinds). */
  histogramPeriods?: { seconds: number[] | null; from: 'nodes' | 'profile' | 'unchecked' };
}

export interface RouteRequest {
  kind: RecordKind;
  /** `--to` (or the profile's `write_to`); absent: primary on a ring, else any. */
  to?: WriteTarget | undefined;
  /** Where `to` came from (`--to`, or the profile key), for messages. */
  toFrom?: string | undefined;
  /** The target's spans: `--smallest-span` or the profile's `smallest_span`, the profile's `histogram_rollups`. */
  spans: ResolvedTarget['spans'];
}

const short = (hash: string): string => hash.slice(0, 12);

/** Decides the target and what records are checked against; logs one line saying so (and warnings for what looks wrong). */
export async function planWriteRoute(request: RouteRequest, nodes: readonly string[], ctx: CliContext, net: Network, seeded: DiscoveredRing | undefined): Promise<WriteRoute> {
  const { kind, to: explicitTo, spans } = request;
  const spanFlag = kind === 'nnt' && spans.smallestSpan?.from === '--smallest-span' ? spans.smallestSpan.value : undefined;
  const listed = nodes.map((n) => net.client(n));
  const wantRing = explicitTo === undefined || explicitTo === 'owners' || explicitTo === 'primary';
  // What the nodes report decides the numeric span (unless the flag does) and the histogram periods.
  const wantSpans = kind === 'nnt' ? spanFlag === undefined : kind === 'histogram';
  let survey: NodeSurvey | undefined;
  if (wantRing || wantSpans) {
    survey = await surveyNodes(listed, {
      clientFor: net.client,
      call: { signal: net.signal },
      ...(seeded ? { seeded } : {}),
      // A seeded ring needs no asking unless the spans are wanted.
      probe: seeded === undefined || wantSpans,
      followRing: wantRing,
    });
  }
  const targets = survey?.targets ?? null;
  if ((explicitTo === 'owners' || explicitTo === 'primary') && !targets) {
    throw new UsageError(
      `${request.toFrom ?? '--to'} ${explicitTo}: ${survey?.noRing ?? 'the nodes run no ring'} (nothing was sent)`,
      'run the nodes with a topology (tsnode cluster up; tsnode serve --topology) and point --seed at one, or write with --to any or --to all',
    );
  }
  const to: WriteTarget = explicitTo ?? (targets ? 'primary' : 'any');
  const onRing = to === 'owners' || to === 'primary';
  const parts: string[] = [];
  const from = request.toFrom && request.toFrom !== '--to' ? ` (from ${request.toFrom})` : '';
  if (to === 'owners') {
    const r = targets!.ring;
    parts.push(
      `--to owners${from}: each record to its ${r.topology.writeCopies} owner${r.topology.writeCopies === 1 ? '' : 's'} on ring ${short(r.hash)} (${r.nodes.length} nodes)`,
    );
  } else if (to === 'primary') {
    const r = targets!.ring;
    parts.push(
      `--to primary${from}: each record once, to its primary owner on ring ${short(r.hash)} (${r.nodes.length} nodes, write_copies ${r.topology.writeCopies}; the store copies it to the others), the next owner when the primary fails`,
    );
  } else if (explicitTo === undefined) {
    parts.push(`--to any: ${survey!.noRing}; each batch goes to one node`);
  }

  const clients = onRing ? targets!.clients : listed;
  const dest = destinations(to, survey, listed);
  const route: WriteRoute = { to, clients, ...(onRing ? { ring: targets!.ring.ring, targets: targets! } : {}) };
  if (kind === 'nnt') route.smallestSpan = decideSpan(spanFlag, spans, dest, ctx, parts);
  if (kind === 'histogram') route.histogramPeriods = decidePeriods(spans, dest, ctx, parts);
  if (parts.length > 0) {
    if (to === 'any' && explicitTo === undefined && survey?.noRingKind === 'mixed') ctx.log.warn(parts.join('; '));
    else ctx.log.info(parts.join('; '));
  }
  if (onRing) {
    const t = targets!;
    if (t.unlisted.length > 0) {
      ctx.log.info(`ring nodes the list does not name are written at their ring address: ${t.unlisted.map((n) => n.url).join(', ')}`);
    }
  }
  for (const note of survey?.notes ?? []) ctx.log.warn(note);
  return route;
}

type Destination = { url: string; self: NodeSelf | null };

/** Numeric records: `--smallest-span`, else the nodes' base_rollup, else the profile's smallest_span, else 60. */
function decideSpan(
  spanFlag: number | undefined,
  spans: ResolvedTarget['spans'],
  dest: readonly Destination[],
  ctx: CliContext,
  parts: string[],
): NonNullable<WriteRoute['smallestSpan']> {
  if (spanFlag !== undefined) {
    const off = dest.filter((d) => d.self?.baseRollup != null && spanFlag % d.self.baseRollup !== 0);
    if (off.length > 0) {
      ctx.log.warn(
        `--smallest-span ${spanFlag}: not a multiple of the smallest span of ${off.map((d) => `${d.url} (${d.self!.baseRollup}s)`).join(', ')}: the node will refuse records whose offsets are not on its span`,
      );
    }
    return { seconds: spanFlag, from: 'flag' };
  }
  const decided = writeSpan(dest);
  if (decided.kind === 'disagree') {
    throw new UsageError(
      `the nodes disagree on their smallest span (base_rollup): ${decided.spans.map((s) => `${s.span}s on ${s.nodes.join(', ')}`).join('; ')} (nothing was sent)`,
      'write to nodes that share one smallest span, or pass --smallest-span to check offsets against one you choose',
    );
  }
  const profile = spans.smallestSpan;
  if (decided.kind === 'agreed') {
    parts.push(`smallest span ${decided.span}s (the nodes' base_rollup${decided.unreported.length ? `; not reported by ${decided.unreported.join(', ')}` : ''})`);
    // The nodes' own report wins over what the profile says; a profile that says otherwise is out of date.
    if (profile && profile.value !== decided.span)
      ctx.log.warn(`${profile.from} says ${profile.value}s, but the nodes report a smallest span of ${decided.span}s: using the nodes' (update the profile)`);
    return { seconds: decided.span, from: 'nodes' };
  }
  if (profile) {
    parts.push(`smallest span ${profile.value}s, from ${profile.from}: the nodes do not report theirs (base_rollup in GET /state)`);
    return { seconds: profile.value, from: 'profile' };
  }
  parts.push(`smallest span ${DEFAULT_SMALLEST_SPAN}s, the default: the nodes do not report theirs (base_rollup in GET /state)`);
  return { seconds: DEFAULT_SMALLEST_SPAN, from: 'default' };
}

/**
 * Histogram records: the periods every destination node keeps (as they report them), else the
 * profile's histogram_rollups, else none (a node refuses a period it does not keep: the record
 * goes to the rejects file with its answer).
 */
function decidePeriods(spans: ResolvedTarget['spans'], dest: readonly Destination[], ctx: CliContext, parts: string[]): NonNullable<WriteRoute['histogramPeriods']> {
  const reported = dest.filter((d) => d.self?.histogramRollups != null);
  if (reported.length > 0) {
    const lists = reported.map((d) => d.self!.histogramRollups!);
    const shared = lists[0]!.filter((p) => lists.every((l) => l.includes(p))).sort((a, b) => a - b);
    if (lists.some((l) => l.length !== shared.length)) {
      ctx.log.warn(
        `the nodes keep different histogram periods (${reported.map((d) => `${d.url}: ${d.self!.histogramRollups!.join(',')}`).join('; ')}): records are checked against those all of them keep (${shared.join(', ') || 'none'})`,
      );
    }
    const unreported = dest.length - reported.length;
    parts.push(
      `histogram periods ${shared.join(', ') || 'none'} (the nodes' histogram rollups${
        unreported
          ? `; not reported by ${dest
              .filter((d) => d.self?.histogramRollups == null)
              .map((d) => d.url)
              .join(', ')}`
          : ''
      })`,
    );
    return { seconds: shared, from: 'nodes' };
  }
  const profile = spans.histogramRollups;
  if (profile) {
    parts.push(`histogram periods ${profile.value.join(', ')}, from ${profile.from}: the nodes do not report theirs`);
    return { seconds: [...profile.value], from: 'profile' };
  }
  parts.push('histogram periods not checked here: the nodes do not report theirs (a node refuses a period it does not keep)');
  return { seconds: null, from: 'unchecked' };
}

/** The nodes a write goes to, with what each said about itself (null: not asked, or no answer). */
function destinations(to: WriteTarget, survey: NodeSurvey | undefined, listed: readonly NodeClient[]): Destination[] {
  if (!survey) return listed.map((c) => ({ url: c.url, self: null }));
  if ((to === 'owners' || to === 'primary') && survey.targets) return survey.targets.clients.map((c, k) => ({ url: c.url, self: survey.targets!.selves[k] ?? null }));
  if (survey.listed.length === listed.length) return survey.listed.map((p) => ({ url: p.url, self: p.self }));
  return listed.map((c) => ({ url: c.url, self: null }));
}
