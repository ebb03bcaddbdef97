/** `tsnode nodes`: each node's state, ring and spans on stdout, as a table, CSV or JSON. */
import type { ClusterView, NodeReport } from '../../../client/cluster-view.js';
import type { CliContext } from '../../context.js';
import { errorJson } from '../../render/json-values.js';
import { lagText } from '../../render/lag.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';

const spans = (xs: readonly number[] | null | undefined): string => (xs ? xs.join(',') : '');

function stateText(r: NodeReport): string {
  return r.state === 'ok' ? 'yes' : r.state === 'unreachable' ? 'unreachable' : 'unexpected answer';
}

function ringText(r: NodeReport, view: ClusterView): string {
  if (!view.ring) return r.topology === 'none' ? '-' : '';
  if (!r.inRing) return 'not in ring';
  return r.topology === 'same' ? 'yes' : r.topology === 'other' ? `other: ${r.self!.current!.slice(0, 12)}` : r.topology === 'none' ? 'none' : '?';
}

/** `--output json`: the ring (or null) and one object per node; snake_case, spans as numbers. */
export function nodesJson(view: ClusterView): unknown {
  const ring = view.ring;
  return {
    ring: ring
      ? {
          hash: ring.hash,
          next: ring.next,
          write_copies: ring.topology.writeCopies,
          node_count: ring.nodes.length,
          from: ring.seed.url,
          format: ring.format,
          verified: ring.verified,
          computed_hash: ring.computedHash,
        }
      : null,
    nodes: view.nodes.map((r) => ({
      id: r.id,
      url: r.url,
      weight: r.weight,
      in_ring: r.inRing,
      listed: r.listed,
      state: r.state,
      reachable: r.state !== 'unreachable',
      topology: r.self?.current ?? null,
      topology_match: r.topology,
      version: r.self?.version ?? null,
      base_rollup: r.self?.baseRollup ?? null,
      nnt_rollups: r.self?.nntRollups ?? null,
      histogram_rollups: r.self?.histogramRollups ?? null,
      lag_seconds: r.self?.lagSeconds ?? null,
      error: r.error === null ? null : errorJson(r.state, r.error),
    })),
  };
}

export const NODES_CSV_HEADERS = [
  'id',
  'url',
  'weight',
  'in_ring',
  'listed',
  'state',
  'topology',
  'version',
  'base_rollup',
  'nnt_rollups',
  'histogram_rollups',
  'error',
  'lag_seconds',
] as const;

export function print(ctx: CliContext, output: 'table' | 'json' | 'csv', view: ClusterView): void {
  if (output === 'json') {
    ctx.stdout.write(renderJson(nodesJson(view)));
    return;
  }
  if (output === 'csv') {
    const rows: CellValue[][] = view.nodes.map((r) => [
      r.id,
      r.url,
      r.weight,
      String(r.inRing),
      String(r.listed),
      r.state,
      r.self?.current ?? '',
      r.self?.version ?? '',
      r.self?.baseRollup ?? '',
      spans(r.self?.nntRollups),
      spans(r.self?.histogramRollups),
      r.error ?? '',
      r.self?.lagSeconds ?? '',
    ]);
    ctx.stdout.write(renderCsv(NODES_CSV_HEADERS, rows, { terminal: Boolean(ctx.stdout.isTTY) }));
    return;
  }
  const rows: CellValue[][] = view.nodes.map((r) => [
    printable(r.id ?? '?'),
    r.url,
    r.weight ?? '-',
    stateText(r),
    ringText(r, view),
    lagText(r.self?.lagSeconds),
    printable(r.self?.version ?? ''),
    spans(r.self?.nntRollups),
    spans(r.self?.histogramRollups),
    printable(r.error ?? (r.listed ? '' : 'not in the node list')),
  ]);
  ctx.stdout.write(
    renderTable(['id', 'url', 'weight', 'reachable', 'ring', 'lag', 'version', 'spans', 'histogram spans', 'note'], rows, {
      colour: ctx.colour,
      width: tableWidth(ctx),
      align: [undefined, undefined, 'right'],
      paint: (cell, col, _r, p) => (col === 3 ? (cell === 'yes' ? p.green(cell) : p.red(cell)) : cell),
    }),
  );
}
