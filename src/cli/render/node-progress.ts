import type { SweepEvent, NodeSweepState } from '../../client/sweep-states.js';
import type { SweepStatus } from '../../protocol/index.js';
import { DATA_TYPES } from '../../protocol/index.js';
import { showsProgress, type CliContext } from '../context.js';
import { painter } from './painter.js';
import { LiveLines, SPINNER } from './live.js';
import { escapeText } from './terminal-text.js';
import { formatElapsed } from './elapsed.js';

/** How a state reads to a person (`timed_out` -> `timed out`). */
export function stateLabel(state: NodeSweepState): string {
  if (state === 'no_sweep_api') return 'no sweep API';
  return state.replace(/_/g, ' ');
}

const ACTIVE: ReadonlySet<NodeSweepState> = new Set(['checking', 'sending', 'running', 'no_answer', 'started']);

/**
 * What a node is working on right now, from its status: `nnt 3f2a…` / `histogram <uuid>-<metric>`.
 * The metric is the node's text: escaped here, since this line is redrawn in place on a terminal.
 */
export function currentWork(status: SweepStatus | undefined): string {
  if (!status) return '';
  const parts: string[] = [];
  for (const t of DATA_TYPES) {
    const s = status[t];
    if (!s.running) continue;
    const item = s.current_metric ?? s.current_uuid;
    parts.push(item ? `${t} ${escapeText(item)}` : t);
  }
  return parts.join(', ');
}

/** Time in a state: tenths of a second below 10 s when `precise` (a state that ended). */
const seconds = (ms: number, precise = false): string => formatElapsed(ms / 1000, { tenthsBelow: precise ? 10 : 0 });

interface Row {
  state: NodeSweepState;
  since: number;
  /** When the node reached a state that no longer changes by itself: its elapsed time stops there. */
  ended?: number;
  error?: string;
  status?: SweepStatus;
}

/**
 * Live per-node progress on stderr, fed with SweepEvents. On a terminal (ctx.interactive) without
 * --no-progress or -q: one line per node (spinner, state, current item, elapsed) redrawn in place.
 * Otherwise: one log line each time a node changes state (none with -q). Used by `sweep` and
 * `status --watch`.
 */
export class NodeProgress {
  private readonly rows = new Map<string, Row>();
  private readonly live: LiveLines | undefined;
  private readonly p: ReturnType<typeof painter>;
  private readonly width: number;

  constructor(
    private readonly ctx: CliContext,
    nodes: readonly string[],
    private readonly opts: { quiet?: ReadonlySet<NodeSweepState> } = {},
  ) {
    this.p = painter(ctx.colourErr);
    this.width = Math.max(...nodes.map((n) => n.length), 4);
    const now = ctx.now();
    for (const n of nodes) this.rows.set(n, { state: 'checking', since: now });
    // --no-progress and -q: no live lines; the plain per-change lines go through ctx.log.info (which -q silences).
    if (ctx.interactive && showsProgress(ctx)) this.live = new LiveLines(ctx.stderr, { render: (frame) => this.lines(frame) }).start();
  }

  /** Feed every event of the run here. */
  readonly onEvent = (e: SweepEvent): void => {
    const row = this.rows.get(e.node) ?? { state: 'checking' as NodeSweepState, since: e.at };
    this.rows.set(e.node, row);
    if (e.kind === 'status') {
      row.status = e.status;
      return;
    }
    const changed = row.state !== e.state;
    // `since` counts from the DELETE for the sweep states, so elapsed means "sweeping for".
    if (changed && (e.state === 'sending' || e.state === 'checking')) row.since = e.at;
    row.state = e.state;
    if (ACTIVE.has(e.state)) delete row.ended;
    else if (changed) row.ended = e.at;
    if (e.status) row.status = e.status;
    // A node's words: escaped once here, for the live lines and the plain ones alike.
    if (e.error !== undefined) row.error = escapeText(e.error);
    else if (e.state !== 'no_answer') delete row.error;
    if (changed && !this.live && !this.opts.quiet?.has(e.state)) this.ctx.log.info(this.plain(e.node, row, e.at));
  };

  private plain(node: string, row: Row, at: number): string {
    const bits = [`${node}: ${stateLabel(row.state)}`];
    const work = row.state === 'running' ? currentWork(row.status) : '';
    if (work) bits.push(`(${work})`);
    if (row.error) bits.push(`- ${row.error}`);
    if (!ACTIVE.has(row.state) && !['idle', 'busy', 'unreachable', 'no_sweep_api', 'skipped'].includes(row.state)) bits.push(`after ${seconds(at - row.since, true)}`);
    return bits.join(' ');
  }

  private paintState(state: NodeSweepState, text: string): string {
    switch (state) {
      case 'done':
      case 'idle':
        return this.p.green(text);
      case 'failed':
      case 'lost':
      case 'unreachable':
      case 'no_sweep_api':
      case 'replaced':
      case 'cancelled':
      case 'unconfirmed':
        return this.p.red(text);
      case 'no_answer':
      case 'timed_out':
      case 'skipped':
      case 'busy':
      case 'interrupted':
        return this.p.yellow(text);
      default:
        return this.p.cyan(text);
    }
  }

  private lines(frame: number): string[] {
    const now = this.ctx.now();
    const spin = SPINNER[frame % SPINNER.length]!;
    return [...this.rows].map(([node, row]) => {
      const glyph = ACTIVE.has(row.state) ? spin : row.state === 'done' || row.state === 'idle' ? '✔' : row.state === 'skipped' ? '-' : '✖';
      const label = stateLabel(row.state).padEnd(11);
      const detail = row.error ?? (row.state === 'running' || row.state === 'no_answer' ? currentWork(row.status) : '');
      const elapsed = this.p.dim(seconds((row.ended ?? now) - row.since, row.ended !== undefined).padStart(6));
      return `${this.paintState(row.state, glyph)} ${node.padEnd(this.width)}  ${this.paintState(row.state, label)} ${elapsed}  ${this.p.dim(detail)}`;
    });
  }

  /** Final frame (interactive) and stop redrawing; call before printing the result to stdout. */
  stop(): void {
    this.live?.stop();
  }
}
