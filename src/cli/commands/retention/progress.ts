import type { NodeSweepState } from '../../../client/sweep-states.js';
import type { RetentionEvent } from '../../../retention/index.js';
import { showsProgress, type CliContext } from '../../context.js';
import { LiveLines, SPINNER } from '../../render/live.js';
import { currentWork, stateLabel } from '../../render/node-progress.js';
import { escapeText } from '../../render/terminal-text.js';
import { painter } from '../../render/painter.js';
import { formatElapsed } from '../../render/elapsed.js';

const ACTIVE: ReadonlySet<string> = new Set(['checking', 'sending', 'running', 'no_answer', 'started']);
/** Transitions not worth a plain log line of their own. */
const QUIET: ReadonlySet<string> = new Set(['checking', 'sending', 'idle', 'started']);

interface Row {
  step: number | null;
  state: NodeSweepState;
  since: number;
  ended?: number;
  error?: string;
  work?: string;
}

const elapsed = (ms: number): string => formatElapsed(ms / 1000, { tenthsBelow: 60 });

/**
 * Live progress of a retention run on stderr: on an interactive terminal one line per node (its
 * step, state, current item, time in the step) redrawn in place; otherwise one timestamped line
 * each time a node's step changes state. -q and --no-progress are honoured (showsProgress).
 */
export class RetentionProgress {
  private readonly rows = new Map<string, Row>();
  private readonly live: LiveLines | undefined;
  private readonly width: number;
  private readonly p: ReturnType<typeof painter>;

  constructor(
    private readonly ctx: CliContext,
    nodes: readonly string[],
    private readonly steps: number,
  ) {
    this.p = painter(ctx.colourErr);
    this.width = Math.max(4, ...nodes.map((n) => n.length));
    for (const n of nodes) this.rows.set(n, { step: null, state: 'checking', since: ctx.now() });
    if (ctx.interactive && showsProgress(ctx) && nodes.length) this.live = new LiveLines(ctx.stderr, { render: (f) => this.lines(f) }).start();
  }

  readonly onEvent = (e: RetentionEvent): void => {
    if (e.kind === 'persist_failed') return;
    const row: Row = this.rows.get(e.node) ?? { step: null, state: 'checking', since: e.kind === 'step_end' ? e.finishedAt : e.at };
    this.rows.set(e.node, row);
    if (e.kind === 'step_end') {
      // The one line per step a log keeps, whatever events led there.
      row.step = e.step;
      row.state = e.state;
      row.ended = e.finishedAt;
      if (e.sentAt !== undefined) row.since = e.sentAt;
      if (e.state !== 'done') row.error = escapeText(e.reason);
      else delete row.error;
      if (!this.live) this.ctx.log.info(this.plain(e.node, row, e.finishedAt));
      return;
    }
    if (e.kind === 'status') {
      row.work = currentWork(e.status);
      return;
    }
    const changed = row.state !== e.state || row.step !== e.step;
    if (changed && (e.state === 'checking' || e.state === 'sending' || row.step !== e.step)) row.since = e.at;
    row.step = e.step;
    row.state = e.state;
    if (ACTIVE.has(e.state)) delete row.ended;
    else if (changed) row.ended = e.at;
    if (e.status) row.work = currentWork(e.status);
    if (e.error !== undefined) row.error = escapeText(e.error);
    else if (e.state !== 'no_answer') delete row.error;
    // Final states are logged once, from step_end.
    if (changed && !this.live && !QUIET.has(e.state) && e.step !== null && ACTIVE.has(e.state)) this.ctx.log.info(this.plain(e.node, row, e.at));
  };

  private stepText(row: Row): string {
    return row.step === null ? 'preflight' : `step ${row.step}/${this.steps}`;
  }

  private plain(node: string, row: Row, at: number): string {
    const bits = [`${node}: ${this.stepText(row)} ${stateLabel(row.state)}`];
    if (row.state === 'running' && row.work) bits.push(`(${row.work})`);
    if (row.error) bits.push(`- ${row.error}`);
    if (!ACTIVE.has(row.state) && row.step !== null && row.state !== 'skipped') bits.push(`after ${elapsed(at - row.since)}`);
    return bits.join(' ');
  }

  private lines(frame: number): string[] {
    const now = this.ctx.now();
    const spin = SPINNER[frame % SPINNER.length]!;
    return [...this.rows].map(([node, row]) => {
      const glyph = ACTIVE.has(row.state) ? spin : row.state === 'done' || row.state === 'idle' ? '✔' : row.state === 'skipped' ? '-' : '✖';
      const colour =
        row.state === 'done' || row.state === 'idle'
          ? this.p.green
          : ACTIVE.has(row.state)
            ? this.p.cyan
            : row.state === 'skipped' || row.state === 'interrupted'
              ? this.p.yellow
              : this.p.red;
      const detail = row.error ?? (row.state === 'running' ? (row.work ?? '') : '');
      const time = this.p.dim(elapsed((row.ended ?? now) - row.since).padStart(7));
      return `${colour(glyph)} ${node.padEnd(this.width)}  ${this.stepText(row).padEnd(10)} ${colour(stateLabel(row.state).padEnd(11))} ${time}  ${this.p.dim(detail)}`;
    });
  }

  stop(): void {
    this.live?.stop();
  }
}
