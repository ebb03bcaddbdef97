import { describe, expect, it } from 'vitest';
import { validateHistogramRecord, validateNntRecord, validateTextRecord } from '../../src/protocol/index.js';
import { DEMO_CHECKS, dailyLoad, demoOffsets, histogramRecords, nntRecordCount, nntRecords, textRecords } from '../../src/cli/commands/demo/dataset.js';

const NOW = Date.parse('2026-11-22T04:30:17.250Z');

describe('demo data set', () => {
  it('covers exactly the asked days in 60 s records ending at the last full minute', () => {
    const { first, last, count } = demoOffsets(NOW, 14);
    expect(count).toBe(14 * 1440);
    expect(last % 60).toBe(0);
    expect(last * 1000).toBeLessThan(NOW);
    expect(NOW - last * 1000).toBeLessThanOrEqual(120_000);
    expect(last - first).toBe((count - 1) * 60);
  });

  it('yields valid records for every check and metric, oldest first per series', () => {
    const opts = { nowMs: NOW, days: 9, checks: DEMO_CHECKS.slice(0, 2) };
    const records = [...nntRecords(opts)];
    expect(records).toHaveLength(nntRecordCount(opts));
    for (const r of records.filter((_, i) => i % 97 === 0)) {
      const v = validateNntRecord(r, { smallestSpan: 60 });
      expect(v.ok, JSON.stringify(v)).toBe(true);
    }
    const series = new Set(records.map((r) => `${r.id}/${r.metric}`));
    expect(series.size).toBe(4);
    for (const s of series) {
      const offsets = records.filter((r) => `${r.id}/${r.metric}` === s).map((r) => r.offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    }
  });

  it('is deterministic', () => {
    const a = [...nntRecords({ nowMs: NOW, days: 8, checks: DEMO_CHECKS.slice(0, 1) })];
    const b = [...nntRecords({ nowMs: NOW, days: 8, checks: DEMO_CHECKS.slice(0, 1) })];
    expect(a).toEqual(b);
  });

  it('cpu follows a daily cycle: afternoons are busier than nights', () => {
    const cpu = [...nntRecords({ nowMs: NOW, days: 14, checks: DEMO_CHECKS.slice(0, 1) })].filter((r) => r.metric === 'cpu');
    const meanAt = (hour: number): number => {
      const xs = cpu.filter((r) => new Date(r.offset * 1000).getUTCHours() === hour).map((r) => r.value);
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    };
    expect(meanAt(16) - meanAt(4)).toBeGreaterThan(30);
    expect(dailyLoad(4 * 3600)).toBeCloseTo(0, 5);
    expect(dailyLoad(16 * 3600)).toBeCloseTo(1, 5);
    expect(cpu.every((r) => r.value >= 0 && r.value <= 100)).toBe(true);
  });

  it('requests is a counter that resets: value drops, derivative goes negative, counter never does', () => {
    const req = [...nntRecords({ nowMs: NOW, days: 14, checks: DEMO_CHECKS.slice(0, 1) })].filter((r) => r.metric === 'requests');
    const drops = req.filter((r, i) => i > 0 && r.value < req[i - 1]!.value);
    expect(drops.length).toBeGreaterThanOrEqual(3);
    expect(drops.every((r) => (r.derivative ?? 0) < 0)).toBe(true);
    expect(req.every((r) => (r.counter ?? 0) >= 0)).toBe(true);
  });

  it('text and histogram records are valid and span the whole range', () => {
    const opts = { nowMs: NOW, days: 14, histogramPeriodS: 60 };
    const texts = textRecords(opts);
    const hists = histogramRecords(opts);
    const { first, last } = demoOffsets(NOW, 14);
    expect(texts.length).toBeGreaterThan(50 * DEMO_CHECKS.length);
    expect(hists.length).toBeGreaterThan(14 * 23 * DEMO_CHECKS.length);
    for (const t of texts) expect(validateTextRecord(t).ok).toBe(true);
    for (const h of hists.slice(0, 50)) expect(validateHistogramRecord(h, [60]).ok).toBe(true);
    for (const xs of [texts, hists]) {
      expect(Math.min(...xs.map((r) => r.offset))).toBeLessThan(first + 6 * 3600);
      expect(Math.max(...xs.map((r) => r.offset))).toBeGreaterThan(last - 6 * 3600);
    }
  });
});
