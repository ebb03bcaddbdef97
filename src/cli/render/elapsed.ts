/**
 * An elapsed time for people, the one format of every table, progress line and ETA: `8.5s`
 * (tenths below `tenthsBelow` seconds, default never), `42s`, `3m05s`, `2h07m`; `?` when unknown.
 * Rounded once, before it is split, so a minute never shows 60 seconds.
 */
export function formatElapsed(seconds: number, opts: { tenthsBelow?: number } = {}): string {
  if (!Number.isFinite(seconds)) return '?';
  const t = Math.max(0, seconds);
  if (t < (opts.tenthsBelow ?? 0)) return `${t.toFixed(1)}s`;
  const s = Math.round(t);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
