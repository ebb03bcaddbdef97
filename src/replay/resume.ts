/**
 * A replay's resume state: where each input stood when an earlier run stopped (what this run
 * skips), and the state file this run keeps, saved as batches are acknowledged, so a killed run
 * can be resumed without losing a record.
 */
import { existsSync } from 'node:fs';
import type { Position } from '../records/batch.js';
import type { RecordKind } from '../records/kinds.js';
import type { RecordFormat, SourceInfo } from '../records/reader.js';
import { checkSavedKind } from './kinds.js';
import { addCounts, checkInput, checkPosition, loadState, noCounts, removeState, saveState, type InputState, type ReplayState, type SettledCounts } from './state.js';
import type { ReplayEvent, StopReason } from './types.js';

/** Where an earlier run left one input. */
export interface ResumePoint {
  pos: Position;
  format: RecordFormat;
  done: boolean;
  settled: SettledCounts;
}

export interface ResumeOptions {
  /** The state file; none when undefined (and in a dry run). */
  path: string | undefined;
  /** Continue what the state file holds (otherwise a state file there is forgotten). */
  resume: boolean;
  /** Resume even when an input changed since the saved run. */
  allowChangedInput: boolean;
  kind: RecordKind;
  rejectsPath: string | undefined;
  /** Shortest gap between two saves. */
  intervalMs: number;
  now: () => number;
  emit: (e: ReplayEvent) => void;
}

export class ResumeState {
  /** Per input name: where the earlier run(s) left it. */
  readonly starts = new Map<string, ResumePoint>();
  /** What the earlier run(s) settled before the saved positions (a resumed run only). */
  readonly earlier: SettledCounts | undefined;
  private readonly state: ReplayState;
  private lastSave = 0;

  /** Reads (or forgets) the state file and checks it against the inputs now on disk. Throws ReplayStateError when a resume cannot go ahead safely. */
  constructor(
    infos: readonly SourceInfo[],
    private readonly opts: ResumeOptions,
  ) {
    const { path, emit } = opts;
    let saved: ReplayState | undefined;
    if (path !== undefined && !opts.resume && existsSync(path)) {
      emit({ type: 'warning', message: `${path} holds the position of an earlier run; starting over (pass --resume to continue it instead)` });
      // Forget it now, not at this run's first acknowledgement: this run starts a new rejects file,
      // and a --resume after it dies before that must not skip to the old position (whose rejects are gone).
      removeState(path);
    }
    if (path !== undefined && opts.resume) {
      saved = loadState(path);
      if (saved === undefined) emit({ type: 'warning', message: `no state file at ${path}: starting from the beginning` });
      else checkSavedKind(path, saved, opts.kind);
    }
    if (saved) {
      const earlier = noCounts();
      for (const info of infos) {
        const s = saved.inputs[info.name];
        if (!s) continue;
        const warning = checkInput(s, info, opts.allowChangedInput);
        if (warning) emit({ type: 'warning', message: warning });
        checkPosition(s, info);
        const settled = { ...noCounts(), ...s.settled };
        addCounts(earlier, settled);
        this.starts.set(info.name, { pos: { record: s.record, byte: s.byte, line: s.line }, format: s.format, done: s.done, settled });
      }
      for (const name of Object.keys(saved.inputs)) {
        if (!infos.some((i) => i.name === name)) emit({ type: 'warning', message: `the state file also lists ${name}, which is not an input of this run` });
      }
      this.earlier = earlier;
    }
    this.state = {
      version: 1,
      updated: new Date(opts.now()).toISOString(),
      rejects: opts.rejectsPath ?? '',
      kind: opts.kind,
      inputs: saved ? { ...saved.inputs } : {},
    };
  }

  get path(): string | undefined {
    return this.opts.path;
  }

  /** Whether this run continues a saved one (its rejects file is appended to). */
  get resumed(): boolean {
    return this.earlier !== undefined;
  }

  /** Where one input now stands (saved by the next `persist`). */
  set(name: string, entry: InputState): void {
    this.state.inputs[name] = entry;
  }

  /** Saves the state file: at most every `intervalMs` unless `force`. */
  persist(force: boolean): void {
    const path = this.opts.path;
    if (path === undefined) return;
    const t = this.opts.now();
    if (!force && t - this.lastSave < this.opts.intervalMs) return;
    this.lastSave = t;
    this.state.updated = new Date(t).toISOString();
    saveState(path, this.state);
  }

  /**
   * A complete run, or one stopped before anything was acknowledged, leaves no state behind: a
   * later --resume would have nothing to skip. Returns the state file still holding a position.
   */
  finish(stopped: StopReason): string | undefined {
    const path = this.opts.path;
    if (path === undefined) return undefined;
    const progressed = Object.values(this.state.inputs).some((e) => e.done || e.record > 0);
    if (stopped === 'done' || !progressed) {
      removeState(path);
      return undefined;
    }
    return path;
  }
}
