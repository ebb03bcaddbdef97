/**
 * The Prometheus text exposition format (version 0.0.4), as node_exporter's textfile collector
 * reads it: `# HELP` and `# TYPE` once per family, then one line per sample. Pure: families in,
 * text out. Label values are escaped (backslash, double quote, line feed); names are checked.
 */

export interface Sample {
  labels: Readonly<Record<string, string | number>>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Renders families in the order given; a family without samples is left out; families of one name are merged. */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const merged = new Map<string, MetricFamily>();
  for (const f of families) {
    if (!NAME.test(f.name)) throw new TypeError(`not a metric name: ${JSON.stringify(f.name)}`);
    const seen = merged.get(f.name);
    if (seen) seen.samples.push(...f.samples);
    else merged.set(f.name, { ...f, samples: [...f.samples] });
  }
  const out: string[] = [];
  for (const f of merged.values()) {
    if (f.samples.length === 0) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    const seenSeries = new Set<string>();
    for (const s of f.samples) {
      const labels = Object.entries(s.labels).map(([k, v]) => {
        if (!LABEL.test(k) || k.startsWith('__')) throw new TypeError(`not a label name: ${JSON.stringify(k)}`);
        return `${k}="${escapeLabel(String(v))}"`;
      });
      const series = labels.length ? `${f.name}{${labels.join(',')}}` : f.name;
      // One sample per series: a repeated series would make the file invalid; the first one stands.
      if (seenSeries.has(series)) continue;
      seenSeries.add(series);
      out.push(`${series} ${formatValue(s.value)}`);
    }
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
