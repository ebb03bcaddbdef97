/**
 * The demo's data set: realistic-looking, deterministic (seeded), and small enough to replay
 * to three nodes in a few seconds. Pure: no I/O, the clock is passed in.
 */
import { encodeHistogram, type HistogramRecord, type NntRecord, type TextRecord } from '../../../protocol/index.js';

export const RECORD_PERIOD_S = 60;
const DAY_S = 86_400;

export interface DemoCheck {
  name: string;
  id: string;
}

export const DEMO_CHECKS: readonly DemoCheck[] = [
  { name: 'web-1', id: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f' },
  { name: 'web-2', id: '8c41d0a2-5e6f-4a7b-8c9d-0e1f2a3b4c5d' },
  { name: 'db-1', id: 'b7e9f3c4-2d1a-4e8b-9f0c-6a5b4c3d2e1f' },
];

/** `cpu`: a percentage with a daily cycle and noise. `requests`: a counter that resets on restarts. */
export const DEMO_METRICS = ['cpu', 'requests'] as const;
export const DEMO_TEXT_METRIC = 'version';
export const DEMO_HISTOGRAM_METRIC = 'latency';

export interface DatasetOptions {
  /** End of the data (exclusive), epoch ms; records are aligned to 60 s below it. */
  nowMs: number;
  days: number;
  checks?: readonly DemoCheck[];
  seed?: number;
  /** The histogram period to write (one of the node's histogram rollups). */
  histogramPeriodS?: number;
}

/** Mulberry32: tiny, fast, good enough for plausible noise, and reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Offsets (epoch s) of every record: `days` of 60 s periods ending at the last full minute before now. */
export function demoOffsets(nowMs: number, days: number): { first: number; last: number; count: number } {
  const last = Math.floor(nowMs / 1000 / RECORD_PERIOD_S) * RECORD_PERIOD_S - RECORD_PERIOD_S;
  const count = Math.round((days * DAY_S) / RECORD_PERIOD_S);
  return { first: last - (count - 1) * RECORD_PERIOD_S, last, count };
}

/** Daily load in [0, 1]: low at 04:00 UTC, peak at 16:00 UTC. */
export function dailyLoad(offsetS: number): number {
  const phase = ((offsetS % DAY_S) / DAY_S) * 2 * Math.PI;
  return 0.5 - 0.5 * Math.cos(phase - (4 / 24) * 2 * Math.PI);
}

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Yields the numeric records check by check, metric by metric, oldest first (NDJSON order).
 * A generator so the demo can stream them to a file without holding them all.
 */
export function* nntRecords(opts: DatasetOptions): Generator<NntRecord> {
  const checks = opts.checks ?? DEMO_CHECKS;
  const { first, count } = demoOffsets(opts.nowMs, opts.days);
  for (const [ci, check] of checks.entries()) {
    const rand = prng((opts.seed ?? 7) * 1000 + ci);
    const noise = (): number => (rand() + rand() + rand() - 1.5) / 1.5; // roughly normal in [-1, 1]
    const base = 20 + ci * 12;
    // cpu: percent, 6 samples a minute.
    for (let i = 0; i < count; i++) {
      const offset = first + i * RECORD_PERIOD_S;
      const v = Math.min(100, Math.max(0, base + 45 * dailyLoad(offset) + 6 * noise()));
      yield {
        metric: 'cpu',
        id: check.id,
        offset,
        count: 6,
        value: round(v),
        derivative: 0,
        counter: 0,
        stddev: round(1.5 + Math.abs(noise())),
        derivative_stddev: 0,
        counter_stddev: 0,
      };
    }
    // requests: a monotonically growing counter that resets to 0 when the service restarts (every ~3.5 days).
    let total = 0;
    const restartEvery = Math.round((3.5 * DAY_S) / RECORD_PERIOD_S) + ci * 97;
    for (let i = 0; i < count; i++) {
      const offset = first + i * RECORD_PERIOD_S;
      const perSecond = Math.max(0, (40 + ci * 15) * (0.2 + dailyLoad(offset)) * (1 + 0.15 * noise()));
      const before = total;
      const restarted = i > 0 && i % restartEvery === 0;
      total = restarted ? Math.round(perSecond * 30) : total + Math.round(perSecond * RECORD_PERIOD_S);
      const derivative = (total - before) / RECORD_PERIOD_S; // negative at a reset
      const counter = restarted ? total / RECORD_PERIOD_S : derivative; // counter ignores the reset
      yield {
        metric: 'requests',
        id: check.id,
        offset,
        count: 1,
        value: total,
        derivative: round(derivative),
        counter: round(counter),
        stddev: 0,
        derivative_stddev: 0,
        counter_stddev: 0,
      };
    }
  }
}

export function nntRecordCount(opts: DatasetOptions): number {
  return (opts.checks ?? DEMO_CHECKS).length * DEMO_METRICS.length * demoOffsets(opts.nowMs, opts.days).count;
}

/** The deployed version of each check, every 6 hours, bumped at each restart-ish day. */
export function textRecords(opts: DatasetOptions): TextRecord[] {
  const checks = opts.checks ?? DEMO_CHECKS;
  const { first, last } = demoOffsets(opts.nowMs, opts.days);
  const out: TextRecord[] = [];
  const step = 6 * 3600;
  for (const check of checks) {
    for (let t = Math.ceil(first / step) * step, n = 0; t <= last; t += step, n++) {
      out.push({ metric: DEMO_TEXT_METRIC, id: check.id, offset: t, value: `v1.${4 + Math.floor(n / 14)}.${n % 14}` });
    }
  }
  return out;
}

/** Hourly latency histograms in the store's encoding: bins at 10, 20, 50, 100 and 200 ms. */
/** 10, 20, 50, 100 and 200 ms, as the store names bins (seconds). */
const LATENCY_BINS = ['+10e-003', '+20e-003', '+50e-003', '+10e-002', '+20e-002'];

export function histogramRecords(opts: DatasetOptions): HistogramRecord[] {
  const checks = opts.checks ?? DEMO_CHECKS;
  const period = opts.histogramPeriodS ?? 60;
  const { first, last } = demoOffsets(opts.nowMs, opts.days);
  const step = 3600;
  const out: HistogramRecord[] = [];
  for (const [ci, check] of checks.entries()) {
    const rand = prng(99 + ci);
    for (let t = Math.ceil(first / step) * step; t <= last; t += step) {
      const bins = Object.fromEntries(LATENCY_BINS.map((bin) => [bin, Math.round(rand() * 100 * (1 + dailyLoad(t)))]));
      out.push({ metric: DEMO_HISTOGRAM_METRIC, id: check.id, offset: t, period, histogram: encodeHistogram(bins) });
    }
  }
  return out;
}
