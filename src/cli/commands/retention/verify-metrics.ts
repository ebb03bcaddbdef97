/** A verify report as Prometheus families (--metrics-file): per node, type and span, its verdict and how far over. */
import type { RetentionCheck, VerifyReport } from '../../../retention/index.js';
import type { MetricFamily, Sample } from '../../render/prometheus.js';

const spanLabel = (c: RetentionCheck): string => (c.span === null ? '-' : String(c.span));

export function verifyFamilies(command: string, report: VerifyReport): MetricFamily[] {
  const per = (fn: (c: RetentionCheck) => number | null): Sample[] =>
    report.nodes.flatMap((n) =>
      n.checks.flatMap((c) => {
        const v = fn(c);
        return v === null ? [] : [{ labels: { command, node: n.node, type: c.type, span: spanLabel(c) }, value: v }];
      }),
    );
  const verified = (c: RetentionCheck): boolean => c.verdict !== 'cannot_verify';
  return [
    {
      name: 'tsnode_retention_verdict',
      help: 'The verdict of each node, type and span, as a label (compliant, over_retained, drift, cannot_verify); value always 1.',
      type: 'gauge',
      samples: report.nodes.flatMap((n) => n.checks.map((c) => ({ labels: { command, node: n.node, type: c.type, span: spanLabel(c), verdict: c.verdict }, value: 1 }))),
    },
    {
      name: 'tsnode_retention_compliant',
      help: '1 when the node, type and span is compliant with the policy, else 0.',
      type: 'gauge',
      samples: per((c) => (c.verdict === 'compliant' ? 1 : 0)),
    },
    {
      name: 'tsnode_retention_over_retention_seconds',
      help: 'How much older than the cut-off the oldest shard lying entirely before it starts (0 when none); absent when it could not be verified.',
      type: 'gauge',
      samples: per((c) => (!verified(c) ? null : (c.excessSeconds ?? 0))),
    },
    {
      name: 'tsnode_retention_shards_past_cutoff',
      help: 'Shards lying entirely before the cut-off; absent when it could not be verified.',
      type: 'gauge',
      samples: per((c) => (!verified(c) ? null : (c.shardsPastCutoff ?? 0))),
    },
    {
      name: 'tsnode_retention_effective_seconds',
      help: 'Age of the oldest shard held (the effective retention); absent when none is held or it is not known.',
      type: 'gauge',
      samples: per((c) => c.effectiveSeconds),
    },
    {
      name: 'tsnode_retention_checks',
      help: 'Checks of the last run by verdict.',
      type: 'gauge',
      samples: Object.entries(report.counts).map(([verdict, n]) => ({ labels: { command, verdict }, value: n })),
    },
  ];
}
