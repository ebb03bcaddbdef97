/** `tsnode locate`: the owners of a metric on stdout, as a table, CSV or JSON. */
import type { LocateResult } from '../../../client/cluster-view.js';
import type { CliContext } from '../../context.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';

/** `--output json`: the key, the ring, the owners primary first, and what the node said; snake_case. */
export function locateJson(r: LocateResult): unknown {
  const check: Record<string, unknown> = { node: r.check.node, result: r.check.result };
  if (r.check.nodeOwners !== undefined) check.node_owners = r.check.nodeOwners;
  if (r.check.error !== undefined) check.error = r.check.error;
  return {
    key: r.key,
    ring: { hash: r.ring.hash, write_copies: r.ring.topology.writeCopies, from: r.ring.seed.url, verified: r.ring.verified },
    owners: r.owners.map((n, i) => ({ rank: i + 1, id: n.id, url: n.url, address: n.address, apiport: n.apiport, weight: n.weight })),
    check,
  };
}

export const LOCATE_CSV_HEADERS = ['rank', 'id', 'url', 'address', 'apiport', 'weight'] as const;

export function print(ctx: CliContext, output: 'table' | 'json' | 'csv', r: LocateResult): void {
  if (output === 'json') return void ctx.stdout.write(renderJson(locateJson(r)));
  const rows: CellValue[][] = r.owners.map((n, i) => [i + 1, n.id, n.url, n.address, n.apiport, n.weight]);
  if (output === 'csv') return void ctx.stdout.write(renderCsv(LOCATE_CSV_HEADERS, rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(
    renderTable(['copy', 'id', 'url', 'address', 'apiport', 'weight'], rows, {
      colour: ctx.colour,
      width: tableWidth(ctx),
      align: ['right', undefined, undefined, undefined, 'right', 'right'],
    }),
  );
}
