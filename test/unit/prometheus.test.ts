import { describe, expect, it } from 'vitest';
import { renderPrometheus } from '../../src/cli/render/prometheus.js';
import { promtoolCheck } from '../helpers/promtool.js';

describe('renderPrometheus', () => {
  it('escapes label values so the real promtool accepts them and the values survive', () => {
    const text = renderPrometheus([
      {
        name: 'tsnode_retention_compliant',
        help: 'help with a \\ backslash\nand a line',
        type: 'gauge',
        samples: [
          { labels: { node: 'http://a:8112/x"y\\z\nw', span: 60 }, value: 1 },
          { labels: { node: 'http://b:8112', span: 'raw' }, value: 0 },
        ],
      },
      { name: 'tsnode_last_run_timestamp_seconds', help: 'when', type: 'gauge', samples: [{ labels: {}, value: 1795321978 }] },
    ]);
    expect(text).toContain('node="http://a:8112/x\\"y\\\\z\\nw"');
    expect(text).toContain('tsnode_last_run_timestamp_seconds 1795321978\n');
    const r = promtoolCheck(text);
    expect(r.output).toBe('');
    expect(r.ok).toBe(true);
  });

  it('merges families of one name, keeps one sample per series and leaves out empty families', () => {
    const text = renderPrometheus([
      { name: 'tsnode_test_value', help: 'x', type: 'gauge', samples: [{ labels: { n: '1' }, value: 1 }] },
      { name: 'empty', help: 'x', type: 'gauge', samples: [] },
      {
        name: 'tsnode_test_value',
        help: 'x',
        type: 'gauge',
        samples: [
          { labels: { n: '1' }, value: 2 },
          { labels: { n: '2' }, value: NaN },
        ],
      },
    ]);
    expect(text).toBe('# HELP tsnode_test_value x\n# TYPE tsnode_test_value gauge\ntsnode_test_value{n="1"} 1\ntsnode_test_value{n="2"} NaN\n');
    expect(promtoolCheck(text).ok).toBe(true);
  });

  it('refuses names that are not metric or label names', () => {
    expect(() => renderPrometheus([{ name: 'a-b', help: '', type: 'gauge', samples: [] }])).toThrow(/not a metric name/);
    expect(() => renderPrometheus([{ name: 'a', help: '', type: 'gauge', samples: [{ labels: { 'x-y': 1 }, value: 1 }] }])).toThrow(/not a label name/);
  });
});
