import { fanOut } from '../../../client/fan-out.js';
import { type NodeSelf } from '../../../client/discovery.js';
import { NodeRequestError } from '../../../client/errors.js';
import { NodeClient, type RollupColumns, type RollupResult } from '../../../client/node-client.js';
import { rollupBuckets } from '../../../client/answer-limits.js';
import type { RowsSoFar } from '../../../client/rollup-rows.js';
import { ownerClients, surveyNodes } from '../../../client/routing.js';
import { NO_RETRY } from '../../../client/retry.js';
import { metricKey } from '../../../ring/index.js';
import type { ResolvedTarget } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { Network } from '../../network.js';
import { openTarget } from '../../node-source.js';
import type { BucketValue, ColumnsCsv, NodeSeries } from '../../render/rollup.js';
import type { DiscoveredRing } from '../../../client/discovery.js';
import { sweptFillWarning, type FilledRows } from './swept-fill.js';
import type { ReadOptions } from './options.js';
import type { CompareNode } from './render.js';
import { describePlan, planRead, readMeta, type ReadPlan } from './plan.js';

/**
 * The printing side (tables, charts, colours, CSV): not needed to send a read, so it loads while
 * the node works on the answer, off the start-up path (bench/read.bench.mjs).
 */
const loadRender = (): Promise<typeof import('./render.js')> => import('./render.js');

/** `reading`'s answer and the renderer, both awaited together (so a failed read is never left unhandled). */
async function withRender<T>(reading: Promise<T>): Promise<[T, Awaited<ReturnType<typeof loadRender>>]> {
  return Promise.all([reading, loadRender()]);
}

/**
 * V8's optimised code reads typed arrays (Buffers) without checking for a detached buffer for as
 * long as no ArrayBuffer has ever been detached in the process; the first detach ends that for
 * good and throws away the optimised code that relied on it, compilations in flight included. A
 * read meets that moment when undici's llhttp grows its WebAssembly memory for the first large
 * piece of the answer: right while V8 optimises the loops that read the rows (--trace-opt: the
 * scan and the CSV loop compiled, aborted, compiled again). Detaching one empty buffer before
 * anything is optimised (bin/tsnode.js keeps TurboFan off until the command starts) spends it for
 * nothing: ~15 ms less for a year of rows. Only here: a write never grows llhttp's memory, and its
 * typed-array code is ~10% faster with the protector intact (bench/write.bench.mjs, CLIENT_ONLY=1).
 */
function spendDetachProtector(): void {
  const spent = new ArrayBuffer(0);
  structuredClone(spent, { transfer: [spent] });
}

export async function readAction(flags: ReadOptions & { uuid: string; metric: string }, ctx: CliContext): Promise<ExitCode> {
  spendDetachProtector();
  const plan = planRead(flags, ctx.now());
  // Only now, with every flag checked, is anything read or sent (a seed's discovery included).
  const run = await openTarget(flags, ctx, { command: 'tsnode read', ...(flags.node !== undefined ? { node: flags.node } : {}) });
  const net = run.network;
  plan.nodes = run.nodes;
  try {
    const { owners, selves } = plan.pinned ? { owners: false, selves: [] } : await readFromOwners(plan, ctx, net, run.ring);
    if (plan.kind === 'histogram') checkPeriod(plan, selves, run.target.spans);
    if (plan.compare) {
      if (plan.nodes.length < 2) ctx.log.warn(`--compare with a single ${owners ? 'owner' : 'node'} (${plan.nodes[0]}): nothing to compare against`);
    } else if (plan.nodes.length > 1 && !owners) {
      // Replicas hold the same data: read the first node that answers (in list order).
      ctx.log.warn(`${plan.nodes.length} nodes listed: reading from the first that answers, starting with ${plan.nodes[0]} (--compare reads them all)`);
    }
    if (plan.compare) {
      const call = { signal: ctx.signal, ...(plan.limit !== undefined ? { limit: plan.limit } : {}) };
      return await runCompare(plan, ctx, net.client, call);
    }
    return await firstAnswer(plan, ctx, owners, (node) => readOne(plan, ctx, net.client(node), node));
  } catch (err) {
    // Ctrl-C: a read changes nothing, so there is nothing to resume; say so and exit 130.
    if (ctx.signal.aborted) {
      ctx.log.warn('interrupted: the read was cancelled, nothing was printed');
      return EXIT.interrupted;
    }
    throw err;
  } finally {
    await net.close();
  }
}

/**
 * `-o csv`: the rows formatted while the node sends the rest (it streams long answers), by the
 * renderer once it has loaded (rows that came earlier are formatted on the next piece). Nothing
 * is printed before the whole answer is in and valid.
 */
function earlyCsv(plan: ReadPlan): { onRows: RowsSoFar; load: () => void; csv: () => ColumnsCsv | undefined } {
  let csv: ColumnsCsv | undefined;
  return {
    onRows: (timestampsMs, values, rows, digits) => csv?.add(timestampsMs, values, rows, digits),
    // Called once the read is on its way: loading the renderer first would delay the request.
    load: () =>
      void loadRender().then(
        (render) => (csv = render.csvAsRowsArrive(plan, rollupBuckets(plan.query))),
        () => undefined, // withRender reports a renderer that failed to load
      ),
    csv: () => csv,
  };
}

/** Reads the nodes in order until one answers; only a node that could not be reached is skipped (an error answer is the answer). */
async function firstAnswer(plan: ReadPlan, ctx: CliContext, owners: boolean, read: (node: string) => Promise<ExitCode>): Promise<ExitCode> {
  for (const [i, node] of plan.nodes.entries()) {
    try {
      return await read(node);
    } catch (err) {
      // Kept: a node that cannot be reached is a fallback to the next, not an error to translate.
      const next = plan.nodes[i + 1];
      if (next === undefined || !(err instanceof NodeRequestError) || (err.code !== 'unreachable' && err.code !== 'timeout')) throw err;
      ctx.log.warn(`${err.message}; trying ${owners ? `the next owner, ${next}` : next}`);
    }
  }
  throw new Error('no node to read from');
}

/** One node's answer, printed. */
async function readOne(plan: ReadPlan, ctx: CliContext, client: NodeClient, node: string): Promise<ExitCode> {
  const q = plan.query;
  if (plan.kind === 'text') {
    ctx.log.debug(`GET ${node}/read/... (text)`);
    const [rows, render] = await withRender(client.readText(q, { signal: ctx.signal }));
    render.logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${rows.length} rows`]);
    await render.renderTextRows(rows, plan, ctx, readMeta(plan, node));
    return EXIT.ok;
  }
  if (plan.kind === 'histogram') {
    ctx.log.debug(`GET ${node}/histogram/... (period ${plan.period})`);
    const [rows, render] = await withRender(client.readHistogram({ ...q, periodS: plan.period! }, { signal: ctx.signal }));
    render.logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${rows.length} rows`]);
    await render.renderHistogramRows(rows, plan, ctx, readMeta(plan, node));
    return EXIT.ok;
  }
  const call = { signal: ctx.signal, ...(plan.limit !== undefined ? { limit: plan.limit } : {}) };
  ctx.log.debug(`GET ${node}${NodeClient.rollupPath(q)}`);
  // One value per row, printed as table/JSON/CSV: read as columns, no object per row.
  const columns = q.type !== 'all' && plan.output !== 'chart';
  const early = plan.output === 'csv' && columns ? earlyCsv(plan) : undefined;
  const reading = columns
    ? client.readRollupColumns(q, { ...call, keepDigits: plan.output === 'csv' || plan.output === 'json', ...(early ? { onRows: early.onRows } : {}) })
    : (client.readRollup(q, call) as Promise<RollupResult<BucketValue>>);
  early?.load();
  // Beside the read, sent after it so the node starts on the rollup first: how far the node's
  // sweeps went per span (a dispatch read fills swept buckets from raw records). Awaited only
  // once the rows are in; its failure only means no warning.
  const swept = q.engine === 'dispatch' ? client.sweepStatus({ signal: ctx.signal, retry: NO_RETRY }).catch(() => null) : Promise.resolve(null);
  const warnFilled = async (rows: FilledRows): Promise<void> => {
    const w = sweptFillWarning(await swept, q.spanMs / 1000, rows, node);
    if (w) ctx.log.warn(w);
  };
  if (columns) {
    const [cols, render] = await withRender(reading as Promise<RollupColumns>);
    const rows = cols.timestampsMs.length;
    render.logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${rows} rows`]);
    warnLimited(ctx, node, { limited: cols.limited, rows }, plan);
    await warnFilled({ count: rows, timestampMs: (i) => cols.timestampsMs[i]!, hasValue: (i) => !Number.isNaN(cols.values[i]!) });
    await render.renderColumns(cols, plan, ctx, { ...readMeta(plan, node), limited: cols.limited }, early?.csv());
    return EXIT.ok;
  }
  const [res, render] = await withRender(reading as Promise<RollupResult<BucketValue>>);
  const used = render.logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${res.points.length} rows`]);
  warnLimited(ctx, node, { limited: res.limited, rows: res.points.length }, plan);
  await warnFilled({ count: res.points.length, timestampMs: (i) => res.points[i]!.timestampMs, hasValue: (i) => res.points[i]!.value !== null });
  await render.renderSingle(res, plan, ctx, used + (res.limited ? 1 : 0), { ...readMeta(plan, node), limited: res.limited });
  return EXIT.ok;
}

/**
 * When the listed nodes (or the seed) run a ring, the read goes to the metric's owners, primary
 * first, and nowhere else: `plan.nodes` becomes the owners. Returns whether it did, and what the
 * nodes to read said about themselves when asked (for the histogram period check).
 */
async function readFromOwners(plan: ReadPlan, ctx: CliContext, net: Network, seeded: DiscoveredRing | undefined): Promise<{ owners: boolean; selves: NodeSelf[] }> {
  const survey = await surveyNodes(
    plan.nodes.map((n) => net.client(n)),
    {
      clientFor: net.client,
      call: { signal: net.signal },
      askUnlisted: false,
      // A histogram read checks its period against what the owners keep: ask them.
      ...(seeded ? { seeded, probe: plan.kind === 'histogram' } : {}),
    },
  );
  if (!survey.targets) {
    // Plain nodes: the list as it is (one line only when the list mixes rings, which deserves a look).
    if (survey.noRingKind === 'mixed') ctx.log.warn(`reading the listed nodes in order: ${survey.noRing}`);
    else ctx.log.debug(`reading the listed nodes in order: ${survey.noRing}`);
    return { owners: false, selves: survey.listed.flatMap((p) => (p.self ? [p.self] : [])) };
  }
  const t = survey.targets;
  const owners = ownerClients(t, plan.query.uuid, plan.query.metric);
  for (const note of survey.notes) ctx.log.warn(note);
  ctx.log.info(
    `owners of ${metricKey(plan.query.uuid, plan.query.metric)} on ring ${t.ring.hash.slice(0, 12)}: ${owners.map((c, i) => (i === 0 ? `${c.url} (primary)` : c.url)).join(', ')}${plan.compare ? '' : owners.length > 1 ? '; reading the first that answers' : ''}`,
  );
  plan.nodes = owners.map((c) => c.url);
  const selves = owners.flatMap((c) => {
    const self = t.selves[t.clients.indexOf(c)];
    return self ? [self] : [];
  });
  return { owners: true, selves };
}

/**
 * A histogram period the nodes to read do not keep is refused before the read (exit 2): the
 * periods they report, else the profile's histogram_rollups; unchecked when neither says.
 */
function checkPeriod(plan: ReadPlan, selves: readonly NodeSelf[], spans: ResolvedTarget['spans']): void {
  const period = plan.period!;
  const off = selves.filter((s) => s.histogramRollups !== null && !s.histogramRollups.includes(period));
  if (off.length > 0) {
    throw new UsageError(
      `--period ${period}: not a histogram period of ${off.map((s) => `${s.url} (it keeps ${s.histogramRollups!.join(', ') || 'none'})`).join(', ')} (nothing was read)`,
      'read a period the node keeps',
    );
  }
  const reported = selves.some((s) => s.histogramRollups !== null);
  const profile = spans.histogramRollups;
  if (!reported && profile && !profile.value.includes(period)) {
    throw new UsageError(
      `--period ${period}: not one of the histogram periods ${profile.from} lists (${profile.value.join(', ')}) (nothing was read)`,
      'read a period the nodes keep, or correct the profile',
    );
  }
}

function warnLimited(ctx: CliContext, node: string, res: { limited: boolean; rows: number }, plan: ReadPlan): void {
  if (!res.limited) return;
  ctx.log.warn(
    `${node} cut the result off after ${res.rows} of ${plan.buckets} rows (x-snowth-results-limited); ` + 'raise it with --limit <n> or --limit none, or read a shorter range',
  );
}

async function runCompare(plan: ReadPlan, ctx: CliContext, client: (url: string) => NodeClient, call: { signal: AbortSignal; limit?: number | 'none' }): Promise<ExitCode> {
  const [outcomes, render] = await withRender(
    fanOut(
      plan.nodes.map((n) => client(n)),
      (c) => c.readRollup(plan.query, call) as Promise<RollupResult<BucketValue>>,
    ),
  );
  if (ctx.signal.aborted) return EXIT.interrupted;
  const { compareSeries, errorJson, logHeader, printComparison } = render;
  logHeader(ctx, [`compare ${plan.nodes.length} nodes`, ...describePlan(plan)]);
  const series: NodeSeries[] = [];
  const nodes: CompareNode[] = [];
  for (const o of outcomes) {
    if (o.ok) {
      series.push({ node: o.node, points: o.value.points });
      nodes.push({ node: o.node, ok: true, rows: o.value.points.length, limited: o.value.limited });
      ctx.log.info(`  ${o.node}: ${o.value.points.length} rows`);
      warnLimited(ctx, o.node, { limited: o.value.limited, rows: o.value.points.length }, plan);
    } else {
      nodes.push({ node: o.node, ok: false, error: errorJson(o.error.code, o.error.detail) });
      ctx.log.error(o.error.message);
      if (o.error.hint) ctx.log.hint(o.error.hint);
    }
  }
  const meta = readMeta(plan);
  const failed = nodes.filter((n) => !n.ok).length;
  if (series.length === 0) {
    ctx.log.error(`every node failed (${failed} of ${plan.nodes.length})`);
    if (plan.output === 'json') await printComparison(compareSeries([], false), [], nodes, plan, ctx, meta);
    return EXIT.failed;
  }
  const all = plan.query.type === 'all';
  const cmp = compareSeries(series, all, plan.tolerance);
  await printComparison(cmp, series, nodes, plan, ctx, meta);
  const n = cmp.grid.timestampsMs.length;
  const verdict =
    cmp.differing === 0
      ? `${series.length} node${series.length === 1 ? '' : 's'} identical over ${n} bucket${n === 1 ? '' : 's'}`
      : `nodes differ in ${cmp.differing} of ${cmp.grid.timestampsMs.length} buckets (marked *)${plan.tolerance > 0 ? ` beyond a relative ${plan.tolerance}` : ''}`;
  if (cmp.differing === 0) ctx.log.info(verdict);
  else ctx.log.warn(verdict);
  if (failed > 0) ctx.log.warn(`${failed} of ${plan.nodes.length} nodes failed: not compared`);
  return cmp.differing > 0 || failed > 0 ? EXIT.partial : EXIT.ok;
}
