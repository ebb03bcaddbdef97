/**
 * The journal's record shapes: what every destructive run writes (a file format, read back by
 * `tsnode history`: keys kept as they are). The run core builds them and hands them to a
 * `RunJournal`; cli/journal.ts is the one that writes them to a file.
 */

/** A journal entry: the fields every line has, and whatever the kind adds. */
export interface JournalEntry {
  kind: string;
  /** The run the line belongs to (every sweep kind has one). */
  run: string;
  [field: string]: unknown;
}

// ---------------------------------------------------------------- sweep entries

/** A node's final state as journaled. */
export interface JournaledNode {
  node: string;
  state: string;
  reason: string;
  error?: string;
  other?: string;
  seconds?: number;
  /** A ring node the run left out (`not_swept`) that this earlier run had swept for the same request. */
  sweptBy?: string;
}

/** What a sweep run deletes, as every sweep entry carries it (so one line is enough to repeat it). */
export interface JournaledSweep {
  by: string;
  /** Epoch seconds sent as the delete time. */
  before: number;
  types: string[];
  /** `"all"`, the spans, or null when the type is not swept. */
  nntRollups: number[] | 'all' | null;
  histogramRollups: number[] | 'all' | null;
  headerPrefix: string;
  /** Where the node list came from (`--nodes nodes.txt`, `profile prod`, `TSNODE_NODES`, `--seed URL`). */
  nodeSource: string;
  /** The line the run printed about its nodes (`nodes: profile prod, 6 nodes`); absent in older journals. */
  described?: string;
  /** The profile whose settings the run used (null: none); absent in older journals. */
  profile?: string | null;
  /** Flags a catch-up carries (TLS files, --insecure, --redact) and flags it only names (--header). */
  carry: string[];
  addBack: string[];
}

export interface SweepStartEntry extends JournalEntry, JournaledSweep {
  kind: 'sweep.start';
  /** Every node of the run, in order (the ones sent a DELETE and the skipped ones). */
  nodes: string[];
  force: boolean;
  wait: boolean;
  /** The ring coverage check (null: the run predates it). */
  coverage?: JournaledCoverage | null;
}

export interface SweepEndEntry extends JournalEntry, JournaledSweep {
  kind: 'sweep.end';
  nodes: JournaledNode[];
  summary: Record<string, number>;
  interrupted: boolean;
  exit: number;
  catchUp: { nodes: string[]; command: string; addBack: string[] } | null;
  coverage?: JournaledCoverage | null;
}

export interface SweepCancelEntry extends JournalEntry {
  kind: 'sweep.cancel';
  by: string;
  nodeSource: string;
  described?: string;
  profile?: string | null;
  nodes: Array<{ node: string; state: string; cancelled: string[]; error: string | null }>;
  coverage?: JournaledCoverage | null;
}

/** What the ring coverage check found, when a run went ahead with --allow-partial (or all was well). */
export interface JournaledCoverage {
  verdict: string;
  hash: string | null;
  missing: Array<{ id: string; url: string }>;
  problems: string[];
  allowed: boolean;
}

// ---------------------------------------------------------------- retention entries

/** Spans of one type as a step sends them: the list, `"all"` (no rollups header), or null (type not swept). */
export type JournaledSpans = number[] | 'all' | null;

export interface RetentionStartEntry extends JournalEntry {
  kind: 'retention.start';
  /** 1 for a new run; each resume adds one. */
  attempt: number;
  by: string;
  policySource: string;
  /** The policy in the file's shape. */
  policy: Record<string, string | Record<string, string>>;
  /** Identifies the same policy on the same nodes (a later run of it may catch up this one's nodes). */
  fingerprint: string;
  /** The pinned "now", epoch seconds. */
  now: number;
  steps: Array<{ step: number; cutoff: number; types: string[]; rules: string[] }>;
  headerPrefix: string;
  nodeSource: string;
  nodes: string[];
  runFile: string;
  coverage: JournaledCoverage | null;
  /** The profile the run used (absent in older journals). */
  profile?: string | null;
  /**
   * The command that continues this run with the flags that reached its nodes (header values never
   * written), for `history` to show when the run was killed before its end line.
   */
  resume?: { command: string; addBack: string[] };
}

export interface RetentionStepEntry extends JournalEntry {
  kind: 'retention.step';
  attempt: number;
  node: string;
  step: number;
  cutoff: number;
  types: string[];
  nntRollups: JournaledSpans;
  histogramRollups: JournaledSpans;
  state: string;
  reason: string;
  /** ISO times of the DELETE and of the end (sentAt null: nothing was sent in any attempt). */
  sentAt: string | null;
  finishedAt: string;
  seconds: number | null;
}

export interface RetentionEndEntry extends JournalEntry {
  kind: 'retention.end';
  attempt: number;
  outcome: string;
  exit: number;
  interrupted: boolean;
  nodes: Array<{ node: string; done: number; steps: number; stoppedAt: { step: number; state: string; reason: string } | null }>;
  catchUp: { nodes: string[]; command: string; addBack: string[] } | null;
}

// ---------------------------------------------------------------- refused runs

/** What a delete run asks (delete.start, delete.end, and a refused delete's run.refused carry these keys). */
export interface JournaledDelete {
  query: string;
  metric: { uuid: string; metric: string } | null;
  account: number;
  scope: { kind: 'full' } | { kind: 'before'; before: number; types: string[] };
}

/** Why a run stopped before sending anything (exit 2). */
export type RefusalCode = 'busy' | 'unreachable' | 'coverage' | 'spans' | 'identity' | 'check' | 'lock';

/**
 * `run.refused`: a run that stopped before sending anything, so a missed night is visible. The
 * `command` says which (`sweep`, `sweep cancel`, `retention apply`, ...); `codes` why, and
 * `reason` in words; `problems` one line per thing found.
 */
export interface RefusedEntry extends JournalEntry {
  kind: 'run.refused';
  command: string;
  by: string;
  codes: RefusalCode[];
  reason: string;
  problems: string[];
  nodes: string[];
  nodeSource: string | null;
  profile?: string | null;
  /** What the run would have deleted (a sweep's fields), when known. */
  sweep?: JournaledSweep | null;
  /** A refused delete: what it would have deleted (JournaledDelete's keys, at the top level as in delete.start). */
  query?: string;
  metric?: JournaledDelete['metric'];
  account?: number;
  scope?: JournaledDelete['scope'];
  /** A retention run's policy source and fingerprint, when known. */
  policySource?: string | null;
  fingerprint?: string | null;
  /** The command that tries again, when one can be built. */
  catchUp?: { nodes: string[]; command: string; addBack: string[] } | null;
}

/** Where a run's records go (cli/journal.ts Journal; a test's array). Never throws: a failed write is the writer's to report. */
export interface RunJournal {
  append(entry: JournalEntry): boolean;
}
