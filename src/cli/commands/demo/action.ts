import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createAgent } from '../../../client/agent.js';
import { NodeClient } from '../../../client/node-client.js';
import { startCluster, TSNODE_BIN, type RunningCluster } from '../../local-cluster/start.js';
import { showReplication } from './replication-step.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { renderTable } from '../../render/table.js';
import { painter } from '../../render/painter.js';
import { isoTime } from '../../time.js';
import { describeStop, nodeCount, writeCopiesFor } from '../cluster/action.js';
import { DEMO_DEFAULT_NODES, type DemoFlags } from './options.js';
import {
  DEMO_CHECKS,
  DEMO_HISTOGRAM_METRIC,
  DEMO_METRICS,
  DEMO_TEXT_METRIC,
  demoOffsets,
  histogramRecords,
  nntRecordCount,
  nntRecords,
  textRecords,
  type DatasetOptions,
} from './dataset.js';

const HISTOGRAM_PERIOD_S = 60;
const SWEEP_AGE = '7d';
const SWEEP_AGE_MS = 7 * 86_400_000;

/** A failed step: the demo exits non-zero naming it. */
class StepFailed extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

export interface NodeVerdict {
  node: string;
  nntOld: number;
  nntRecent: number;
  nntRecentExpected: number;
  textOld: number;
  textRecent: number;
  textRecentExpected: number;
  histOld: number;
  histRecent: number;
  histRecentExpected: number;
  ok: boolean;
}

export async function demoAction(flags: DemoFlags, ctx: CliContext): Promise<ExitCode> {
  const count = nodeCount(flags, ctx, 'demo', DEMO_DEFAULT_NODES);
  const paceMs = flags.pace;
  const days = flags.days;
  const checks = DEMO_CHECKS.slice(0, flags.checks);
  const paint = painter(ctx.colourErr);
  const started = ctx.now();
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-demo-'));
  const nodesFile = 'nodes.txt';
  const dataFile = 'demo.ndjson';
  let cluster: RunningCluster | undefined;
  let current: ReturnType<typeof spawn> | undefined;
  let stepNo = 0;
  const totalSteps = 10;
  let kept = false;
  const childEnv: NodeJS.ProcessEnv = { ...ctx.env, ...(ctx.colourErr ? {} : { NO_COLOR: '1' }) };
  // The steps name their nodes with --nodes; the user's target settings (a profile's headers and
  // TLS, extra headers) are for their own cluster, never for these throw-away local nodes.
  for (const k of ['TSNODE_NODES', 'TSNODE_PROFILE', 'TSNODE_HEADERS', 'TSNODE_STATE_DIR']) delete childEnv[k];
  // The steps' state (the run core's target locks) stays with the demo's throw-away nodes, like its
  // journal: the operator's state dir is left as it was.
  childEnv.XDG_STATE_HOME = join(dir, 'state');
  // -q and --no-progress reach the steps too: the demo's own output is theirs.
  const childFlags = [...(ctx.quiet ? ['-q'] : ctx.progress === false ? ['--no-progress'] : [])];

  const header = (title: string): void => {
    stepNo += 1;
    ctx.log.info('');
    ctx.log.info(paint.bold(`── ${stepNo}/${totalSteps}  ${title}`));
  };
  const say = (line: string): void => ctx.log.info(paint.dim(line));
  const showCommand = (args: string[]): void => ctx.log.info(paint.cyan(`$ tsnode ${args.map(shellWord).join(' ')}`));

  /** Runs a real `tsnode` command as a child, output straight to the user's terminal. */
  const tsnode = async (step: string, args: string[], okCodes: readonly number[] = [EXIT.ok]): Promise<void> => {
    showCommand(args);
    if (ctx.signal.aborted) throw new StepFailed(step, 'interrupted');
    const child = spawn(process.execPath, [TSNODE_BIN, ...childFlags, ...args], { cwd: dir, env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    current = child;
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    current = undefined;
    if (ctx.signal.aborted) throw new StepFailed(step, 'interrupted');
    if (code === null || !okCodes.includes(code)) {
      throw new StepFailed(step, `\`tsnode ${args.join(' ')}\` exited with ${code !== null ? `code ${code}` : `signal ${signal}`}`);
    }
  };
  // Ctrl-C: the terminal also interrupts the child; when only we get it (kill -INT), pass it on.
  const onAbort = (): void => {
    current?.kill('SIGINT');
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  const dataset: DatasetOptions = { nowMs: ctx.now(), days, checks, histogramPeriodS: HISTOGRAM_PERIOD_S };
  const focus = checks[0]!;
  let step = 'start the cluster';
  try {
    ctx.log.info(paint.bold('tsnode demo: a retention sweep across a local cluster, end to end'));
    say(`working in ${dir} (removed at the end${flags.keep ? ' unless the demo succeeds with --keep' : ''})`);
    ctx.log.info(`$ cd ${dir}`);

    header(`Start a ${count}-node cluster (one \`tsnode serve\` process per node, free ports)`);
    showCommand(['cluster', 'up', '--count', String(count), '--base-port', '0', '--dir', '.', '--sweep-pace', String(paceMs), ...(flags.keep ? ['--detach'] : [])]);
    say('(run in-process by the demo, through the same code as that command)');
    try {
      cluster = await startCluster({
        count,
        basePort: 0,
        dir,
        sweepPaceMs: paceMs,
        // A ring, as `cluster up` starts one: it replicates (the replication step shows it).
        ring: { writeCopies: writeCopiesFor(undefined, count) },
        detached: flags.keep,
        signal: ctx.signal,
        env: childEnv,
        onNodeReady: (n) => ctx.log.info(`  node ${n.index}  ${n.url}  pid ${n.pid}`),
      });
    } catch (err) {
      throw new StepFailed(step, (err as Error).message);
    }
    void cluster.unexpectedExit.then(({ node, code, signal }) => {
      if (!ctx.signal.aborted) ctx.log.error(`node ${node.index} (${node.url}) exited unexpectedly (${code ?? signal}); see ${node.logFile}`);
    });
    ctx.log.info(`  node list written to ${nodesFile}`);

    step = 'generate the data set';
    const { first, last } = demoOffsets(dataset.nowMs, days);
    const nntCount = nntRecordCount(dataset);
    header(`Generate ${days} days of 60 s records: ${checks.length} checks x ${DEMO_METRICS.join(', ')} (${nntCount.toLocaleString('en-US')} records)`);
    say(`cpu follows a daily cycle with noise; requests is a counter that resets when a service restarts`);
    say(`from ${isoTime(first * 1000)} to ${isoTime(last * 1000)}; checks: ${checks.map((c) => `${c.name}=${c.id}`).join(', ')}`);
    await writeNdjson(join(dir, dataFile), nntRecords(dataset));
    const texts = textRecords(dataset);
    const histograms = histogramRecords(dataset);
    say(`plus ${texts.length} text records (${DEMO_TEXT_METRIC}) and ${histograms.length} histograms (${DEMO_HISTOGRAM_METRIC}) written with the library:`);
    say(`  new NodeClient(url, ...).writeText(records) / .writeHistogram(records), to every node`);
    await withClients(cluster, async (clients) => {
      for (const c of clients) {
        await c.writeText(texts, { signal: ctx.signal });
        await c.writeHistogram(histograms, { signal: ctx.signal });
      }
    }).catch((err: unknown) => {
      throw new StepFailed(step, (err as Error).message);
    });

    step = 'replay the records';
    header('Replay the numeric records to every node');
    await tsnode(step, ['write', dataFile, '--nodes', nodesFile, '--to', 'all']);

    step = 'replication';
    header('Replication: a record written to one node reaches its second owner');
    const ring = cluster;
    await withClients(ring, (clients) => showReplication(ring, clients, { checkId: focus.id, offsetS: last - (last % 60), signal: ctx.signal, say })).catch((err: unknown) => {
      throw new StepFailed(step, (err as Error).message);
    });

    const node1 = cluster.state.nodes[0]!.url;
    const readTable = ['read', focus.id, 'cpu', '--start', `${days}d`, '--end', 'now', '--span', '1d', '--output', 'table', '--nodes', node1];
    step = 'read a metric as a table';
    header(`Read ${focus.name}'s cpu from one node: daily averages`);
    await tsnode(step, readTable);

    step = 'read a metric as a chart';
    header(`The same metric as a chart (hourly): the daily cycle`);
    await tsnode(step, ['read', focus.id, 'cpu', '--start', `${days}d`, '--end', 'now', '--span', '1h', '--output', 'chart', '--nodes', node1]);

    step = 'sweep';
    header(`Sweep: delete everything older than ${SWEEP_AGE}, all types, on every node (paced so you can watch)`);
    const sweepFrom = ctx.now();
    say('--poll-interval 500ms: check each node twice a second (default 2s), to watch it closely');
    // The demo's nodes are throwaway: its sweep is journaled beside them, not in the operator's history.
    say(`--journal: this sweep is recorded in ${dir}, not in your own sweep history (tsnode history)`);
    await tsnode(step, ['sweep', '--before', SWEEP_AGE, '--types', 'nnt,text,histogram', '--yes', '--poll-interval', '500ms', '--nodes', nodesFile, '--journal', 'sweeps.jsonl']);
    const sweepTo = ctx.now();

    step = 'status';
    header('Sweep status of every node');
    await tsnode(step, ['status', '--nodes', nodesFile]);

    step = 'read again';
    header(`Read the metric again: the first week is gone, the last ${SWEEP_AGE} are kept`);
    await tsnode(step, readTable);

    step = 'verify';
    header('Check every node (library reads): nothing older than the cut-off left, everything newer kept');
    const verdicts = await withClients(cluster, (clients) =>
      Promise.all(
        clients.map((c) => verifyNode(c, { dataset, oldBeforeMs: sweepFrom - SWEEP_AGE_MS - 60_000, recentFromMs: sweepTo - SWEEP_AGE_MS + 60_000, signal: ctx.signal })),
      ),
    ).catch((err: unknown) => {
      throw new StepFailed(step, (err as Error).message);
    });
    ctx.stdout.write(renderSummary(verdicts, ctx.colour));
    const bad = verdicts.filter((v) => !v.ok);
    if (bad.length > 0) throw new StepFailed(step, `${bad.length} node(s) did not sweep as expected: ${bad.map((v) => v.node).join(', ')}`);
    const seconds = ((ctx.now() - started) / 1000).toFixed(1);
    ctx.stdout.write(`demo ok: ${verdicts.length}/${verdicts.length} nodes swept (old data removed, recent data kept) in ${seconds} s\n`);

    if (flags.keep) {
      kept = true;
      ctx.log.info('');
      ctx.log.info(paint.green(`The cluster keeps running (data in ${dir}). Try:`));
      ctx.log.info(`  tsnode status --nodes ${join(dir, nodesFile)}`);
      ctx.log.info(`  tsnode read ${focus.id} cpu --start 7d --span 6h --nodes ${join(dir, nodesFile)}`);
      ctx.log.info(`  tsnode sweep --before 2d --yes --nodes ${join(dir, nodesFile)}`);
      ctx.log.info(`Stop it and remove its data with:`);
      ctx.log.info(`  tsnode cluster down --dir ${dir} && rm -rf ${dir}`);
    }
    return EXIT.ok;
  } catch (err) {
    if (ctx.signal.aborted) {
      ctx.log.warn(`interrupted during step "${step}"; cleaning up`);
      return EXIT.interrupted;
    }
    if (err instanceof StepFailed) {
      ctx.log.error(`demo failed at step "${err.step}": ${err.message}`);
      return EXIT.failed;
    }
    if (err instanceof UsageError) throw err;
    ctx.log.error(`demo failed at step "${step}": ${(err as Error).message}`);
    return EXIT.failed;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (current) {
      current.kill('SIGTERM');
      await once(current, 'exit').catch(() => {});
    }
    if (!kept) {
      if (cluster) {
        const results = await cluster.stop({ graceMs: 3000 });
        ctx.log.info('');
        const stoppedCount = results.filter((r) => r.outcome !== 'gone').length;
        ctx.log.info(
          `stopped ${stoppedCount === results.length ? '' : `${stoppedCount} of `}${results.length} node${results.length === 1 ? '' : 's'}: ${results.map((r) => describeStop(r).replace(/^node \d+ /, '')).join('; ')}`,
        );
      }
      rmSync(dir, { recursive: true, force: true });
      ctx.log.info(`removed ${dir}`);
    }
  }
}

/** Quotes a word for display only when the shell would need it. */
function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

async function writeNdjson(file: string, records: Iterable<unknown>): Promise<void> {
  const out = createWriteStream(file);
  let chunk = '';
  for (const r of records) {
    chunk += `${JSON.stringify(r)}\n`;
    if (chunk.length > 1 << 16) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

async function withClients<T>(cluster: RunningCluster, fn: (clients: NodeClient[]) => Promise<T>): Promise<T> {
  const dispatcher = createAgent({ connectTimeoutMs: 3000 });
  try {
    return await fn(cluster.state.nodes.map((n) => new NodeClient(n.url, { dispatcher })));
  } finally {
    await dispatcher.close();
  }
}

/** Counts what is left on one node before the cut-off (must be nothing) and after it (must be everything). */
export async function verifyNode(client: NodeClient, opts: { dataset: DatasetOptions; oldBeforeMs: number; recentFromMs: number; signal?: AbortSignal }): Promise<NodeVerdict> {
  const { first, last } = demoOffsets(opts.dataset.nowMs, opts.dataset.days);
  const startMs = first * 1000;
  const endMs = (last + 60) * 1000;
  const call = opts.signal ? { signal: opts.signal } : {};
  const hour = 3_600_000;
  const v: NodeVerdict = {
    node: client.url,
    nntOld: 0,
    nntRecent: 0,
    nntRecentExpected: 0,
    textOld: 0,
    textRecent: 0,
    textRecentExpected: 0,
    histOld: 0,
    histRecent: 0,
    histRecentExpected: 0,
    ok: false,
  };
  for (const check of opts.dataset.checks ?? DEMO_CHECKS) {
    for (const metric of DEMO_METRICS) {
      const r = await client.readRollup({ uuid: check.id, metric, startMs, endMs, spanMs: hour, type: 'count' }, call);
      for (const p of r.points) {
        // An hour bucket is "old" if it ends before the cut-off, "recent" if it starts after it and holds data we wrote.
        if (p.timestampMs + hour <= opts.oldBeforeMs && p.value !== null && p.value > 0) v.nntOld++;
        if (p.timestampMs >= opts.recentFromMs && p.timestampMs < endMs) {
          v.nntRecentExpected++;
          if (p.value !== null && p.value > 0) v.nntRecent++;
        }
      }
    }
    const texts = await client.readText({ uuid: check.id, metric: DEMO_TEXT_METRIC, startMs, endMs }, call);
    // Text change points come back in milliseconds (as the store's read-text page shows them).
    v.textOld += texts.filter(([ms]) => ms < opts.oldBeforeMs).length;
    v.textRecent += texts.filter(([ms]) => ms >= opts.recentFromMs).length;
    const hists = await client.readHistogram({ uuid: check.id, metric: DEMO_HISTOGRAM_METRIC, startMs, endMs, periodS: HISTOGRAM_PERIOD_S }, call);
    v.histOld += hists.filter(([t]) => t * 1000 < opts.oldBeforeMs).length;
    v.histRecent += hists.filter(([t]) => t * 1000 >= opts.recentFromMs).length;
  }
  v.textRecentExpected = textRecords(opts.dataset).filter((r) => r.offset * 1000 >= opts.recentFromMs).length;
  v.histRecentExpected = histogramRecords(opts.dataset).filter((r) => r.offset * 1000 >= opts.recentFromMs).length;
  v.ok =
    v.nntOld === 0 &&
    v.textOld === 0 &&
    v.histOld === 0 &&
    v.nntRecent === v.nntRecentExpected &&
    v.nntRecent > 0 &&
    v.textRecent === v.textRecentExpected &&
    v.histRecent === v.histRecentExpected;
  return v;
}

function renderSummary(verdicts: readonly NodeVerdict[], colour: boolean): string {
  const pair = (old: number, recent: number, expected: number): string => `${old} / ${recent} of ${expected}`;
  return renderTable(
    ['node', 'numeric hours: old / kept', 'text: old / kept', 'histograms: old / kept', 'result'],
    verdicts.map((v) => [
      v.node,
      pair(v.nntOld, v.nntRecent, v.nntRecentExpected),
      pair(v.textOld, v.textRecent, v.textRecentExpected),
      pair(v.histOld, v.histRecent, v.histRecentExpected),
      v.ok ? 'ok' : 'FAILED',
    ]),
    { colour, align: [undefined, 'right', 'right', 'right'], paint: (cell, col, _row, p) => (col === 4 ? (cell === 'ok' ? p.green(cell) : p.red(cell)) : cell) },
  );
}
