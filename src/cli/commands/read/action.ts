import {
  ENGINES,
  ROLLUP_TYPES,
  ROLLUP_TYPE_ALIASES,
  UUID_RE,
  canonicalRollupType,
  formatSpan,
  type Engine,
  type RollupQuery,
  type RollupType,
} from '../../../protocol/index.js';
import { fanOut } from '../../../client/cluster.js';
import { NodeRequestError } from '../../../client/errors.js';
import { NodeClient, type RollupColumns, type RollupResult } from '../../../client/node-client.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openNetwork, type Network } from '../../network.js';
import { seededRing } from '../../node-source.js';
import { DiscoveryError } from '../../../client/discovery.js';
import { ownerClients, surveyNodes } from '../../../client/routing.js';
import { metricKey } from '../../../ring/index.js';
import { parseNodeEntry, resolveNodes, NODE_LINE_FORMS } from '../../nodes.js';
import { painter } from '../../runtime.js';
import { describeTime, parseTime } from '../../time.js';
import { renderChart } from '../../render/chart.js';
import {
  columnsCsvChunks,
  compareSeries,
  comparisonJson,
  gridCsv,
  gridCsvChunks,
  gridJson,
  gridOf,
  gridOfColumns,
  gridTable,
  nodeLabel,
  type BucketValue,
  type NodeSeries,
  type Paint,
} from '../../render/rollup.js';
import type { ReadFlags } from './command.js';
import { bucketCount, checkBuckets, chooseSpan, parseSpanFlag } from './span.js';

const OUTPUTS = ['table', 'json', 'csv', 'chart'] as const;
type Output = (typeof OUTPUTS)[number];
const DAY_MS = 86_400_000;

export interface ReadPlan {
  query: RollupQuery & { engine: Engine; type: RollupType };
  spanChosen: boolean;
  buckets: number;
  nodes: string[];
  /** `--node`: read exactly that node (no ring lookup). */
  pinned: boolean;
  compare: boolean;
  limit: number | 'none' | undefined;
  tolerance: number;
  output: Output;
  warnings: string[];
}

/** Validates and normalises everything before a single request is sent. Throws UsageError. */
export function planRead(flags: ReadFlags & { uuid: string; metric: string }, env: { env: NodeJS.ProcessEnv; cwd: string; now: number }): ReadPlan {
  if (!UUID_RE.test(flags.uuid)) {
    throw new UsageError(`<uuid>: ${JSON.stringify(flags.uuid)} is not a UUID`, 'a check UUID looks like 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f');
  }
  if (flags.metric === '') throw new UsageError('<metric>: the metric name is empty', 'pass the metric name exactly as stored');
  const engine = flags.engine.trim().toLowerCase();
  if (!(ENGINES as readonly string[]).includes(engine)) {
    throw new UsageError(`--engine: ${JSON.stringify(flags.engine)} is not an engine`, `allowed: ${ENGINES.join(', ')}`);
  }
  const type = canonicalRollupType(flags.type.trim().toLowerCase());
  if (!type) {
    throw new UsageError(
      `--type: ${JSON.stringify(flags.type)} is not a rollup type`,
      `allowed: ${ROLLUP_TYPES.join(', ')} (aliases: ${Object.keys(ROLLUP_TYPE_ALIASES).join(', ')})`,
    );
  }
  const output = flags.output.trim().toLowerCase() as Output;
  if (!OUTPUTS.includes(output)) throw new UsageError(`--output: ${JSON.stringify(flags.output)} is not an output format`, `allowed: ${OUTPUTS.join(', ')}`);

  const endMs = parseTime(flags.end ?? 'now', '--end', env.now);
  const startMs = flags.start === undefined ? endMs - DAY_MS : parseTime(flags.start, '--start', env.now);
  if (startMs < 0) throw new UsageError(`--start: ${describeStart(flags.start, startMs)} is before 1970`, 'use a later --start');
  if (startMs >= endMs) {
    throw new UsageError(
      `--start ${describeTime(startMs)} is not before --end ${describeTime(endMs)}`,
      'the range is [start, end): --start must be earlier than --end',
    );
  }
  const spanMs = flags.span === undefined ? chooseSpan(startMs, endMs) : parseSpanFlag(flags.span);
  const buckets = bucketCount(startMs, endMs, spanMs);
  checkBuckets(buckets, spanMs);

  let limit: number | 'none' | undefined;
  if (flags.limit !== undefined) {
    const l = flags.limit.trim().toLowerCase();
    if (l === 'none') limit = 'none';
    else if (/^\d+$/.test(l) && Number(l) >= 1 && Number.isSafeInteger(Number(l))) limit = Number(l);
    else throw new UsageError(`--limit: ${JSON.stringify(flags.limit)} is not a row limit`, 'a whole number >= 1, or none');
  }

  let tolerance = 0;
  if (flags.tolerance !== undefined) {
    const t = flags.tolerance.trim();
    tolerance = /^(\d+(\.\d*)?|\.\d+)(e-?\d+)?$/i.test(t) ? Number(t) : NaN;
    if (!(tolerance >= 0 && tolerance < 1)) {
      throw new UsageError(`--tolerance: ${JSON.stringify(flags.tolerance)} is not a relative difference`, 'a number from 0 (exact) up to but below 1, e.g. 1e-9');
    }
    if (!flags.compare) throw new UsageError('--tolerance without --compare', 'it says when two nodes\' values count as equal; add --compare');
  }
  if (flags.node !== undefined && flags.nodes !== undefined) throw new UsageError('--node and --nodes both given', 'use --node for one node or --nodes for a list');
  const warnings: string[] = [];
  let nodes: string[];
  if (flags.node !== undefined) {
    try {
      nodes = [parseNodeEntry(flags.node)];
    } catch (err) {
      throw new UsageError(`--node: ${(err as Error).message}`, `a node is ${NODE_LINE_FORMS}`);
    }
  } else {
    const list = resolveNodes({ flag: flags.nodes, env: env.env, cwd: env.cwd });
    warnings.push(...list.warnings);
    nodes = list.nodes;
  }
  if (flags.compare && output === 'chart') throw new UsageError('--compare with --output chart: a chart draws one node', 'use --output table, json or csv with --compare');
  if (output === 'chart' && type === 'all') {
    throw new UsageError('--type all with --output chart: a chart draws one value', 'pick one --type (e.g. average), or use table, json or csv for all members');
  }
  return {
    query: { uuid: flags.uuid, metric: flags.metric, startMs, endMs, spanMs, engine: engine as Engine, type },
    spanChosen: flags.span === undefined,
    buckets,
    nodes,
    pinned: flags.node !== undefined,
    compare: flags.compare,
    limit,
    tolerance,
    output,
    warnings,
  };
}

function describeStart(text: string | undefined, ms: number): string {
  return text === undefined ? String(ms) : JSON.stringify(text);
}

function describePlan(plan: ReadPlan): string[] {
  const q = plan.query;
  return [
    `check ${q.uuid}`,
    `metric ${JSON.stringify(q.metric)}`,
    `type ${q.type}`,
    `span ${formatSpan(q.spanMs)}${plan.spanChosen ? ' (auto)' : ''}`,
    `engine ${q.engine}`,
    `${describeTime(q.startMs)} → ${describeTime(q.endMs)}`,
  ];
}

/**
 * The header as lines: one line for logs and pipes (easy to grep), wrapped at the ` · `
 * separators to the terminal width on a TTY so it does not break mid-word.
 */
export function headerLines(parts: readonly string[], width: number | undefined): string[] {
  if (!width) return [parts.join(' · ')];
  const lines: string[] = [];
  let line = '';
  parts.forEach((part, i) => {
    const next = line === '' ? part : `${line} · ${part}`;
    // Every line but the last ends in ` ·`: keep room for it.
    const room = i === parts.length - 1 ? width : width - 2;
    if (line !== '' && [...next].length > room) {
      lines.push(`${line} ·`);
      line = `  ${part}`;
    } else line = next;
  });
  if (line !== '') lines.push(line);
  return lines;
}

function logHeader(ctx: CliContext, parts: string[]): number {
  const lines = headerLines(parts, ctx.stderr.isTTY ? ctx.stderr.columns ?? 80 : undefined);
  for (const l of lines) ctx.log.info(l);
  return lines.length;
}

/** Colours for tables, or none at all (no per-cell calls when colour is off). */
function paintFor(enabled: boolean): Paint | undefined {
  if (!enabled) return undefined;
  const c = painter(enabled);
  return { dim: (s) => c.dim(s), bold: (s) => c.bold(s), highlight: (s) => c.yellow.bold(s) };
}

function paintOpt(ctx: CliContext): { paint?: Paint } {
  const paint = paintFor(ctx.colour);
  return paint ? { paint } : {};
}

function chartSize(ctx: CliContext, headerUsed: number): { width: number; height: number } {
  const tty = Boolean(ctx.stdout.isTTY);
  const cols = tty && ctx.stdout.columns ? ctx.stdout.columns : Number(ctx.env.COLUMNS) || 80;
  const rows = tty && ctx.stdout.rows ? ctx.stdout.rows : Number(ctx.env.LINES) || 24;
  // Leave room for the header lines on stderr and the shell prompt, so the chart fits one screen.
  // One column spare: a line that fills the last column makes some terminals wrap.
  return { width: Math.max(30, cols - 1), height: Math.max(8, Math.min(rows - headerUsed - 1, 40)) };
}

async function write(ctx: CliContext, text: string): Promise<void> {
  if (ctx.stdout.write(text)) return;
  await new Promise<void>((resolve) => ctx.stdout.once('drain', () => resolve()));
}

export async function readAction(flags: ReadFlags & { uuid: string; metric: string }, ctx: CliContext): Promise<ExitCode> {
  const plan = planRead(flags, { env: ctx.env, cwd: ctx.cwd, now: ctx.now() });
  for (const w of plan.warnings) ctx.log.warn(w);
  const net = openNetwork(flags, ctx);
  try {
    const owners = plan.pinned ? false : await readFromOwners(plan, flags, ctx, net);
    if (plan.compare) {
      if (plan.nodes.length < 2) ctx.log.warn(`--compare with a single ${owners ? 'owner' : 'node'} (${plan.nodes[0]}): nothing to compare against`);
    } else if (plan.nodes.length > 1 && !owners) {
      // Replicas hold the same data: read the first node that answers (in list order).
      ctx.log.warn(`${plan.nodes.length} nodes listed: reading from the first that answers, starting with ${plan.nodes[0]} (--compare reads them all)`);
    }
    const call = { signal: ctx.signal, ...(plan.limit !== undefined ? { limit: plan.limit } : {}) };
    if (!plan.compare) {
      for (const [i, node] of plan.nodes.entries()) {
        ctx.log.debug(`GET ${node}${NodeClient.rollupPath(plan.query)}`);
        try {
          if (plan.query.type !== 'all' && plan.output !== 'chart') {
            // One value per row, printed as table/JSON/CSV: read as columns, no object per row.
            const cols = await net.client(node).readRollupColumns(plan.query, call);
            const rows = cols.timestampsMs.length;
            logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${rows} rows`]);
            warnLimited(ctx, node, { limited: cols.limited, rows }, plan);
            await renderColumns(cols, plan, ctx);
            return EXIT.ok;
          }
          const res = (await net.client(node).readRollup(plan.query, call)) as RollupResult<BucketValue>;
          const used = logHeader(ctx, [`node ${node}`, ...describePlan(plan), `${res.points.length} rows`]);
          warnLimited(ctx, node, { limited: res.limited, rows: res.points.length }, plan);
          await renderSingle(res, plan, ctx, used + (res.limited ? 1 : 0));
          return EXIT.ok;
        } catch (err) {
          // Only a node we could not reach is worth skipping; an error answer is the answer.
          const next = plan.nodes[i + 1];
          if (next === undefined || !(err instanceof NodeRequestError) || (err.code !== 'unreachable' && err.code !== 'timeout')) throw err;
          ctx.log.warn(`${err.message}; trying ${owners ? `the next owner, ${next}` : next}`);
        }
      }
    }
    return await runCompare(plan, ctx, net.client, call);
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
 * When the listed nodes (or the seed) run a ring, the read goes to the metric's owners, primary
 * first, and nowhere else: `plan.nodes` becomes the owners. Returns whether it did.
 */
async function readFromOwners(plan: ReadPlan, flags: ReadFlags, ctx: CliContext, net: Network): Promise<boolean> {
  const seeded = seededRing(flags);
  let survey;
  try {
    survey = await surveyNodes(
      plan.nodes.map((n) => net.client(n)),
      { clientFor: net.client, call: { signal: net.signal }, askUnlisted: false, ...(seeded ? { seeded, probe: false } : {}) },
    );
  } catch (err) {
    if (err instanceof DiscoveryError) throw new UsageError(err.message, err.hint);
    throw err;
  }
  if (!survey.targets) {
    // Plain nodes: the list as it is (one line only when the list mixes rings, which deserves a look).
    if (survey.noRingKind === 'mixed') ctx.log.warn(`reading the listed nodes in order: ${survey.noRing}`);
    else ctx.log.debug(`reading the listed nodes in order: ${survey.noRing}`);
    return false;
  }
  const t = survey.targets;
  const owners = ownerClients(t, plan.query.uuid, plan.query.metric).map((c) => c.url);
  for (const note of survey.notes) ctx.log.warn(note);
  ctx.log.info(
    `owners of ${metricKey(plan.query.uuid, plan.query.metric)} on ring ${t.ring.hash.slice(0, 12)}: ${owners.map((u, i) => (i === 0 ? `${u} (primary)` : u)).join(', ')}${plan.compare ? '' : owners.length > 1 ? '; reading the first that answers' : ''}`,
  );
  plan.nodes = owners;
  return true;
}

function warnLimited(ctx: CliContext, node: string, res: { limited: boolean; rows: number }, plan: ReadPlan): void {
  if (!res.limited) return;
  ctx.log.warn(
    `${node} cut the result off after ${res.rows} of ${plan.buckets} rows (x-snowth-results-limited); ` +
      'raise it with --limit <n> or --limit none, or read a shorter range',
  );
}

async function renderColumns(cols: RollupColumns, plan: ReadPlan, ctx: CliContext): Promise<void> {
  const spanMs = plan.query.spanMs;
  switch (plan.output) {
    case 'csv':
      for (const chunk of columnsCsvChunks(cols.timestampsMs, cols.values, 'value', spanMs)) await write(ctx, chunk);
      return;
    case 'json':
      return write(ctx, gridJson(gridOfColumns(cols.timestampsMs, cols.values), spanMs));
    default: {
      if (cols.timestampsMs.length === 0) {
        ctx.log.info('no buckets in range');
        return;
      }
      const grid = gridOfColumns(cols.timestampsMs, cols.values, plan.query.type);
      return write(ctx, `${gridTable(grid, spanMs, paintOpt(ctx)).join('\n')}\n`);
    }
  }
}

async function renderSingle(res: RollupResult<BucketValue>, plan: ReadPlan, ctx: CliContext, headerUsed: number): Promise<void> {
  const spanMs = plan.query.spanMs;
  const all = plan.query.type === 'all';
  switch (plan.output) {
    case 'json':
      return write(ctx, gridJson(gridOf(res.points, all), spanMs));
    case 'csv':
      for (const chunk of gridCsvChunks(gridOf(res.points, all), spanMs)) await write(ctx, chunk);
      return;
    case 'chart': {
      const { width, height } = chartSize(ctx, headerUsed);
      const c = painter(ctx.colour);
      const lines = renderChart(res.points as Array<{ timestampMs: number; value: number | null }>, {
        width,
        height,
        spanMs,
        ascii: ctx.env.TSNODE_CHART === 'ascii',
        paintLine: (s) => c.cyan(s),
        paintAxis: (s) => c.dim(s),
      });
      return write(ctx, `${lines.join('\n')}\n`);
    }
    case 'table': {
      if (res.points.length === 0) {
        ctx.log.info('no buckets in range');
        return;
      }
      const grid = gridOf(res.points, all, plan.query.type);
      return write(ctx, `${gridTable(grid, spanMs, paintOpt(ctx)).join('\n')}\n`);
    }
  }
}

async function runCompare(
  plan: ReadPlan,
  ctx: CliContext,
  client: (url: string) => NodeClient,
  call: { signal: AbortSignal; limit?: number | 'none' },
): Promise<ExitCode> {
  const outcomes = await fanOut(
    plan.nodes.map((n) => client(n)),
    (c) => c.readRollup(plan.query, call) as Promise<RollupResult<BucketValue>>,
  );
  if (ctx.signal.aborted) return EXIT.interrupted;
  logHeader(ctx, [`compare ${plan.nodes.length} nodes`, ...describePlan(plan)]);
  const series: NodeSeries[] = [];
  const nodes: Array<{ node: string; ok: boolean; error?: string; rows?: number; limited?: boolean }> = [];
  for (const o of outcomes) {
    if (o.ok) {
      series.push({ node: o.node, points: o.value.points });
      nodes.push({ node: o.node, ok: true, rows: o.value.points.length, limited: o.value.limited });
      ctx.log.info(`  ${o.node}: ${o.value.points.length} rows`);
      warnLimited(ctx, o.node, { limited: o.value.limited, rows: o.value.points.length }, plan);
    } else {
      nodes.push({ node: o.node, ok: false, error: o.error.detail });
      ctx.log.error(o.error.message);
      if (o.error.hint) ctx.log.info(`  hint: ${o.error.hint}`);
    }
  }
  const failed = nodes.filter((n) => !n.ok).length;
  if (series.length === 0) {
    ctx.log.error(`every node failed (${failed} of ${plan.nodes.length})`);
    if (plan.output === 'json') await write(ctx, comparisonJson(compareSeries([], false), [], plan.query.spanMs, nodes));
    return EXIT.failed;
  }
  const all = plan.query.type === 'all';
  const cmp = compareSeries(series, all, plan.tolerance);
  const spanMs = plan.query.spanMs;
  switch (plan.output) {
    case 'json':
      await write(ctx, comparisonJson(cmp, series, spanMs, nodes));
      break;
    case 'csv': {
      const grid = { ...cmp.grid, columns: cmp.grid.columns.map((c) => ({ ...c })) };
      await write(ctx, gridCsv(grid, spanMs, { header: 'differs', cells: cmp.differs.map((d) => (d ? 'true' : 'false')) }));
      break;
    }
    default: {
      const headers = cmp.sources.map((s) => (s.member ? `${nodeLabel(s.node)} ${s.member}` : nodeLabel(s.node)));
      if (cmp.grid.timestampsMs.length > 0) {
        await write(ctx, `${gridTable(cmp.grid, spanMs, { ...paintOpt(ctx), headers, marks: cmp.differs }).join('\n')}\n`);
      }
    }
  }
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
