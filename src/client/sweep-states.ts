/** The states a node passes through in a sweep run, and the events that report them. */
import type { SweepStatus } from '../protocol/index.js';
import type { Clock } from './clock.js';

/**
 * Every state a node passes through in a sweep run.
 * Transient: `checking`, `idle`, `busy`, `unreachable`, `sending`, `running`, `no_answer`.
 * Final (one per node in the result): `done` (the evidence says our sweep ran to the end),
 * `late_data` (the sweep ran to the end, but on a replicating ring data older than the cut-off was
 * still on its way to the node, or arrived after: it may be back), `started` (with wait=false), `replaced` (another sweep took its place), `cancelled`, `failed`
 * (the DELETE was refused or answered with anything but `[]`, or the node says the sweep failed),
 * `unconfirmed` (tsnode cannot tell whether it ran to the end), `lost`, `skipped`, `timed_out`,
 * `interrupted`.
 */
export type NodeSweepState = 'checking' | 'idle' | 'busy' | 'unreachable' | 'no_sweep_api' | 'sending' | 'running' | 'no_answer' | FinalSweepState;
export const FINAL_SWEEP_STATES = ['done', 'late_data', 'started', 'replaced', 'cancelled', 'failed', 'unconfirmed', 'lost', 'skipped', 'timed_out', 'interrupted'] as const;
export type FinalSweepState = (typeof FINAL_SWEEP_STATES)[number];

export type SweepEvent =
  /** A node moved to another state. `error` says why: the reason of a final state other than done, a poll's error for no_answer/unreachable. */
  | { kind: 'state'; node: string; state: NodeSweepState; at: number; error?: string; status?: SweepStatus }
  /** A poll answered (every poll, also without a state change): for live progress lines. */
  | { kind: 'status'; node: string; at: number; status: SweepStatus };

export type SweepListener = (event: SweepEvent) => void;

/** Reports a node's state change to the run's listener, stamped with the run's clock. */
export function stateEmitter(listener: SweepListener | undefined, clock: Clock) {
  return (node: string, state: NodeSweepState, extra: { error?: string; status?: SweepStatus } = {}): void => {
    listener?.({ kind: 'state', node, state, at: clock.now(), ...extra });
  };
}
