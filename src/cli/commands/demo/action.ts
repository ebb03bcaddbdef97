import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createAgent } from '../../../client/agent.js';
import { NodeClient } from '../../../client/node-client.js';
import { startCluster, TSNODE_BIN, type RunningCluster } from '../../local-cluster/start.js';
import { showReplication } from './replication-step.js';
import { demoOkLine, renderSummary, shellWord } from './render.js';
import { verifyNode } from './verify.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { painter } from '../../render/painter.js';
import { thousands } from '../../render/number-format.js';
import { isoTime } from '../../time.js';
import { nodeCount, writeCopiesFor } from '../../local-cluster/node-count.js';
import { describeStop } from '../../local-cluster/stop-text.js';
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

const TOTAL_STEPS = 10;
const NODES_FILE = 'nodes.txt';
const DATA_FILE = 'demo.ndjson';

/** One demo: its working directory, its cluster, the step it is at, and the `tsnode` child running now. */
class Demo {
  readonly dir = mkdtempSync(join(tmpdir(), 'tsnode-demo-'));
  readonly paint: ReturnType<typeof painter>;
  readonly started: number;
  readonly checks: typeof DEMO_CHECKS;
  readonly dataset: DatasetOptions;
  private readonly childEnv: NodeJS.ProcessEnv;
  private readonly childFlags: string[];
  cluster: RunningCluster | undefined;
  current: ReturnType<typeof spawn> | undefined;
  /** The step being run, for the failure message. */
  step = 'start the cluster';
  private stepNo = 0;
  kept = false;

  constructor(
    readonly flags: DemoFlags,
    readonly ctx: CliContext,
    readonly count: number,
  ) {
    this.checks = DEMO_CHECKS.slice(0, flags.checks);
    this.paint = painter(ctx.colourErr);
    this.started = ctx.now();
    const childEnv: NodeJS.ProcessEnv = { ...ctx.env, ...(ctx.colourErr ? {} : { NO_COLOR: '1' }) };
    // The steps name their nodes with --nodes; the user's target settings (a profile's headers and
    // TLS, extra headers) are for their own cluster, never for these throw-away local nodes.
    for (const k of ['TSNODE_NODES', 'TSNODE_PROFILE', 'TSNODE_HEADERS', 'TSNODE_STATE_DIR']) delete childEnv[k];
    // The steps' state (the run core's target locks) stays with the demo's throw-away nodes, like its
    // journal: the operator's state dir is left as it was.
    childEnv.XDG_STATE_HOME = join(this.dir, 'state');
    this.childEnv = childEnv;
    // -q and --no-progress reach the steps too: the demo's own output is theirs.
    this.childFlags = [...(ctx.quiet ? ['-q'] : ctx.progress === false ? ['--no-progress'] : [])];
    this.dataset = { nowMs: ctx.now(), days: flags.days, checks: this.checks, histogramPeriodS: HISTOGRAM_PERIOD_S };
  }

  header(title: string): void {
    this.stepNo += 1;
    this.ctx.log.info('');
    this.ctx.log.info(this.paint.bold(`── ${this.stepNo}/${TOTAL_STEPS}  ${title}`));
  }

  readonly say = (line: string): void => this.ctx.log.info(this.paint.dim(line));

  showCommand(args: string[]): void {
    this.ctx.log.info(this.paint.cyan(`$ tsnode ${args.map(shellWord).join(' ')}`));
  }

  /** Runs a real `tsnode` command as a child, output straight to the user's terminal. */
  async tsnode(args: string[], okCodes: readonly number[] = [EXIT.ok]): Promise<void> {
    const { ctx, step } = this;
    this.showCommand(args);
    if (ctx.signal.aborted) throw new StepFailed(step, 'interrupted');
    const child = spawn(process.execPath, [TSNODE_BIN, ...this.childFlags, ...args], { cwd: this.dir, env: this.childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    this.current = child;
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    this.current = undefined;
    if (ctx.signal.aborted) throw new StepFailed(step, 'interrupted');
    if (code === null || !okCodes.includes(code)) {
      throw new StepFailed(step, `\`tsnode ${args.join(' ')}\` exited with ${code !== null ? `code ${code}` : `signal ${signal}`}`);
    }
  }

  /** Ctrl-C: the terminal also interrupts the child; when only we get it (kill -INT), pass it on. */
  readonly onAbort = (): void => {
    this.current?.kill('SIGINT');
  };

  /** A library step (not a child command): its failure is the step's. */
  async library<T>(work: Promise<T>): Promise<T> {
    return work.catch((err: unknown) => {
      throw new StepFailed(this.step, (err as Error).message);
    });
  }

  /** Every step in order; throws StepFailed naming the one that failed. */
  async run(): Promise<void> {
    const { ctx, paint, flags } = this;
    ctx.log.info(paint.bold('tsnode demo: a retention sweep across a local cluster, end to end'));
    this.say(`working in ${this.dir} (removed at the end${flags.keep ? ' unless the demo succeeds with --keep' : ''})`);
    ctx.log.info(`$ cd ${this.dir}`);
    const cluster = await this.startCluster();
    const last = await this.generate(cluster);

    this.step = 'replay the records';
    this.header('Replay the numeric records to every node');
    await this.tsnode(['write', DATA_FILE, '--nodes', NODES_FILE, '--to', 'all']);

    this.step = 'replication';
    this.header('Replication: a record written to one node reaches its second owner');
    const focus = this.checks[0]!;
    await this.library(withClients(cluster, (clients) => showReplication(cluster, clients, { checkId: focus.id, offsetS: last - (last % 60), signal: ctx.signal, say: this.say })));

    const node1 = cluster.state.nodes[0]!.url;
    const days = flags.days;
    const readTable = ['read', focus.id, 'cpu', '--start', `${days}d`, '--end', 'now', '--span', '1d', '--output', 'table', '--nodes', node1];
    this.step = 'read a metric as a table';
    this.header(`Read ${focus.name}'s cpu from one node: daily averages`);
    await this.tsnode(readTable);

    this.step = 'read a metric as a chart';
    this.header(`The same metric as a chart (hourly): the daily cycle`);
    await this.tsnode(['read', focus.id, 'cpu', '--start', `${days}d`, '--end', 'now', '--span', '1h', '--output', 'chart', '--nodes', node1]);

    const swept = await this.sweep();

    this.step = 'status';
    this.header('Sweep status of every node');
    await this.tsnode(['status', '--nodes', NODES_FILE]);

    this.step = 'read again';
    this.header(`Read the metric again: the first week is gone, the last ${SWEEP_AGE} are kept`);
    await this.tsnode(readTable);

    await this.verify(cluster, swept);
    if (flags.keep) this.keep();
  }

  async startCluster(): Promise<RunningCluster> {
    const { ctx, flags, count } = this;
    this.header(`Start a ${count}-node cluster (one \`tsnode serve\` process per node, free ports)`);
    this.showCommand(['cluster', 'up', '--count', String(count), '--base-port', '0', '--dir', '.', '--sweep-pace', String(flags.pace), ...(flags.keep ? ['--detach'] : [])]);
    this.say('(run in-process by the demo, through the same code as that command)');
    let cluster: RunningCluster;
    try {
      cluster = this.cluster = await startCluster({
        count,
        basePort: 0,
        dir: this.dir,
        sweepPaceMs: flags.pace,
        // A ring, as `cluster up` starts one: it replicates (the replication step shows it).
        ring: { writeCopies: writeCopiesFor(undefined, count) },
        detached: flags.keep,
        signal: ctx.signal,
        env: this.childEnv,
        onNodeReady: (n) => ctx.log.info(`  node ${n.index}  ${n.url}  pid ${n.pid}`),
      });
    } catch (err) {
      throw new StepFailed(this.step, (err as Error).message);
    }
    void cluster.unexpectedExit.then(({ node, code, signal }) => {
      if (!ctx.signal.aborted) ctx.log.error(`node ${node.index} (${node.url}) exited unexpectedly (${code ?? signal}); see ${node.logFile}`);
    });
    ctx.log.info(`  node list written to ${NODES_FILE}`);
    return cluster;
  }

  /** The data set: the numeric records in a file (replayed by a step), text and histograms written with the library. Returns its last offset. */
  async generate(cluster: RunningCluster): Promise<number> {
    const { ctx, dataset, checks } = this;
    const days = this.flags.days;
    this.step = 'generate the data set';
    const { first, last } = demoOffsets(dataset.nowMs, days);
    const nntCount = nntRecordCount(dataset);
    this.header(`Generate ${days} days of 60 s records: ${checks.length} checks x ${DEMO_METRICS.join(', ')} (${thousands(nntCount)} records)`);
    this.say(`cpu follows a daily cycle with noise; requests is a counter that resets when a service restarts`);
    this.say(`from ${isoTime(first * 1000)} to ${isoTime(last * 1000)}; checks: ${checks.map((c) => `${c.name}=${c.id}`).join(', ')}`);
    await writeNdjson(join(this.dir, DATA_FILE), nntRecords(dataset));
    const texts = textRecords(dataset);
    const histograms = histogramRecords(dataset);
    this.say(`plus ${texts.length} text records (${DEMO_TEXT_METRIC}) and ${histograms.length} histograms (${DEMO_HISTOGRAM_METRIC}) written with the library:`);
    this.say(`  new NodeClient(url, ...).writeText(records) / .writeHistogram(records), to every node`);
    await this.library(
      withClients(cluster, async (clients) => {
        for (const c of clients) {
          await c.writeText(texts, { signal: ctx.signal });
          await c.writeHistogram(histograms, { signal: ctx.signal });
        }
      }),
    );
    return last;
  }

  /** The sweep, as a child command; returns when it started and ended. */
  async sweep(): Promise<{ from: number; to: number }> {
    this.step = 'sweep';
    this.header(`Sweep: delete everything older than ${SWEEP_AGE}, all types, on every node (paced so you can watch)`);
    const from = this.ctx.now();
    this.say('--poll-interval 500ms: check each node twice a second (default 2s), to watch it closely');
    // The demo's nodes are throwaway: its sweep is journaled beside them, not in the operator's history.
    this.say(`--journal: this sweep is recorded in ${this.dir}, not in your own sweep history (tsnode history)`);
    await this.tsnode(['sweep', '--before', SWEEP_AGE, '--types', 'nnt,text,histogram', '--yes', '--poll-interval', '500ms', '--nodes', NODES_FILE, '--journal', 'sweeps.jsonl']);
    return { from, to: this.ctx.now() };
  }

  /** Every node read with the library: nothing older than the cut-off left, everything newer kept. */
  async verify(cluster: RunningCluster, swept: { from: number; to: number }): Promise<void> {
    const { ctx } = this;
    this.step = 'verify';
    this.header('Check every node (library reads): nothing older than the cut-off left, everything newer kept');
    const verdicts = await this.library(
      withClients(cluster, (clients) =>
        Promise.all(
          clients.map((c) =>
            verifyNode(c, { dataset: this.dataset, oldBeforeMs: swept.from - SWEEP_AGE_MS - 60_000, recentFromMs: swept.to - SWEEP_AGE_MS + 60_000, signal: ctx.signal }),
          ),
        ),
      ),
    );
    ctx.stdout.write(renderSummary(verdicts, ctx.colour));
    const bad = verdicts.filter((v) => !v.ok);
    if (bad.length > 0) throw new StepFailed(this.step, `${bad.length} node(s) did not sweep as expected: ${bad.map((v) => v.node).join(', ')}`);
    const seconds = ((ctx.now() - this.started) / 1000).toFixed(1);
    ctx.stdout.write(demoOkLine(verdicts.length, seconds));
  }

  /** --keep: the cluster keeps running, and how to use and stop it. */
  keep(): void {
    const { ctx, dir } = this;
    this.kept = true;
    ctx.log.info('');
    ctx.log.info(this.paint.green(`The cluster keeps running (data in ${dir}). Try:`));
    ctx.log.info(`  tsnode status --nodes ${join(dir, NODES_FILE)}`);
    ctx.log.info(`  tsnode read ${this.checks[0]!.id} cpu --start 7d --span 6h --nodes ${join(dir, NODES_FILE)}`);
    ctx.log.info(`  tsnode sweep --before 2d --yes --nodes ${join(dir, NODES_FILE)}`);
    ctx.log.info(`Stop it and remove its data with:`);
    ctx.log.info(`  tsnode cluster down --dir ${dir} && rm -rf ${dir}`);
  }

  /** Stops the running child and, unless kept, the cluster, and removes the working directory. */
  async cleanUp(): Promise<void> {
    const { ctx } = this;
    ctx.signal.removeEventListener('abort', this.onAbort);
    if (this.current) {
      this.current.kill('SIGTERM');
      await once(this.current, 'exit').catch(() => {});
    }
    if (this.kept) return;
    if (this.cluster) {
      const results = await this.cluster.stop({ graceMs: 3000 });
      ctx.log.info('');
      const stoppedCount = results.filter((r) => r.outcome !== 'gone').length;
      ctx.log.info(
        `stopped ${stoppedCount === results.length ? '' : `${stoppedCount} of `}${results.length} node${results.length === 1 ? '' : 's'}: ${results.map((r) => describeStop(r).replace(/^node \d+ /, '')).join('; ')}`,
      );
    }
    rmSync(this.dir, { recursive: true, force: true });
    ctx.log.info(`removed ${this.dir}`);
  }
}

export async function demoAction(flags: DemoFlags, ctx: CliContext): Promise<ExitCode> {
  // The node count first: a bad one is a usage error before any directory is made.
  const demo = new Demo(flags, ctx, nodeCount(flags, ctx, 'demo', DEMO_DEFAULT_NODES));
  ctx.signal.addEventListener('abort', demo.onAbort, { once: true });
  try {
    await demo.run();
    return EXIT.ok;
  } catch (err) {
    if (ctx.signal.aborted) {
      ctx.log.warn(`interrupted during step "${demo.step}"; cleaning up`);
      return EXIT.interrupted;
    }
    // Kept: a failed step is the demo's result (exit 1 naming the step), and the cleanup below runs either way.
    if (err instanceof StepFailed) {
      ctx.log.error(`demo failed at step "${err.step}": ${err.message}`);
      return EXIT.failed;
    }
    if (err instanceof UsageError) throw err;
    ctx.log.error(`demo failed at step "${demo.step}": ${(err as Error).message}`);
    return EXIT.failed;
  } finally {
    await demo.cleanUp();
  }
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
