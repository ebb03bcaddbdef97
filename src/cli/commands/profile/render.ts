/** `tsnode profile list` and `profile show`: the profiles on stdout, as a table or JSON (secrets redacted). */
import type { CliContext } from '../../context.js';
import type { ConfigFile, Profile } from '../../config/file.js';
import { resolveConfigRelative, showPath } from '../../config/paths.js';
import { redactTemplate } from '../../config/secrets.js';
import { renderTable, tableWidth } from '../../render/table.js';
import { formatDuration } from '../../values.js';

/** One profile as `show --output json` and `list --output json` print it: the file's keys, secrets redacted. */
export function profileJson(p: Profile, config: ConfigFile, home: string): Record<string, unknown> {
  const out: Record<string, unknown> = { name: p.name, current: config.current?.name === p.name };
  if (p.nodes) out.nodes = p.nodes;
  if (p.nodesFile) out.nodes_file = p.nodesFile;
  if (p.seed) out.seed = p.seed;
  if (p.headerPrefix) out.header_prefix = p.headerPrefix;
  for (const k of ['cacert', 'cert', 'key'] as const) if (p[k]) out[k] = p[k];
  if (p.headers.length) out.headers = Object.fromEntries(p.headers.map((h) => [h.name, redactTemplate(h.template)]));
  if (p.smallestSpan !== undefined) out.smallest_span = p.smallestSpan;
  if (p.nntRollups) out.nnt_rollups = p.nntRollups;
  if (p.histogramRollups) out.histogram_rollups = p.histogramRollups;
  if (p.writeTo) out.write_to = p.writeTo;
  if (p.allowLag !== undefined) out.allow_lag = formatDuration(p.allowLag);
  if (p.skipUnreachable !== undefined) out.skip_unreachable = p.skipUnreachable;
  // Paths as they will be read (relative ones from the config file's directory, ~ expanded).
  const resolved: Record<string, string> = {};
  if (p.nodesFile) resolved.nodes_file = resolveConfigRelative(p.nodesFile, config.path, home);
  for (const k of ['cacert', 'cert', 'key'] as const) if (p[k]) resolved[k] = resolveConfigRelative(p[k], config.path, home);
  if (Object.keys(resolved).length) out.resolved_paths = resolved;
  return out;
}

function nodesSummary(p: Profile, config: ConfigFile, home: string): string {
  if (p.nodes) return `${p.nodes.length} node${p.nodes.length === 1 ? '' : 's'}: ${p.nodes.join(', ')}`;
  if (p.nodesFile) return `file ${showPath(resolveConfigRelative(p.nodesFile, config.path, home), home)}`;
  if (p.seed) return `seed ${p.seed}`;
  return '(none)';
}

/** `profile list`: one row per profile, the current one starred. */
export function printProfileList(profiles: readonly Profile[], config: ConfigFile, home: string, ctx: CliContext): void {
  const rows = profiles.map((p) => [
    config.current?.name === p.name ? '*' : '',
    p.name,
    nodesSummary(p, config, home),
    p.headerPrefix ?? '',
    p.headers.map((h) => h.name).join(', '),
  ]);
  ctx.stdout.write(renderTable(['', 'profile', 'nodes', 'header prefix', 'headers'], rows, { colour: ctx.colour, width: tableWidth(ctx) }));
}

/** `profile show`: one row per setting of the profile (`json`: its profileJson, for the resolved paths). */
export function printProfile(p: Profile, json: Record<string, unknown>, home: string, ctx: CliContext): void {
  const rows: string[][] = [];
  const resolved = (json.resolved_paths ?? {}) as Record<string, string>;
  const withResolved = (k: string, v: string): string => (resolved[k] && resolved[k] !== v ? `${v} (${showPath(resolved[k], home)})` : v);
  rows.push(['profile', `${p.name}${json.current ? ' (current)' : ''}`]);
  // One row per node: a line break inside a cell would show as \n (cells are escaped).
  if (p.nodes) p.nodes.forEach((node, i) => rows.push([i === 0 ? 'nodes' : '', node]));
  if (p.nodesFile) rows.push(['nodes_file', withResolved('nodes_file', p.nodesFile)]);
  if (p.seed) rows.push(['seed', p.seed]);
  if (!p.nodes && !p.nodesFile && !p.seed) rows.push(['nodes', '(none: give --nodes or --seed, or TSNODE_NODES)']);
  if (p.headerPrefix) rows.push(['header_prefix', p.headerPrefix]);
  for (const k of ['cacert', 'cert', 'key'] as const) if (p[k]) rows.push([k, withResolved(k, p[k])]);
  for (const h of p.headers) rows.push([`headers.${h.name}`, redactTemplate(h.template)]);
  if (p.smallestSpan !== undefined) rows.push(['smallest_span', String(p.smallestSpan)]);
  if (p.nntRollups) rows.push(['nnt_rollups', p.nntRollups.join(', ')]);
  if (p.histogramRollups) rows.push(['histogram_rollups', p.histogramRollups.join(', ')]);
  if (p.writeTo) rows.push(['write_to', p.writeTo]);
  if (p.allowLag !== undefined) rows.push(['allow_lag', formatDuration(p.allowLag)]);
  if (p.skipUnreachable !== undefined) rows.push(['skip_unreachable', String(p.skipUnreachable)]);
  ctx.stdout.write(renderTable(['setting', 'value'], rows, { colour: ctx.colour, width: tableWidth(ctx) }));
}
