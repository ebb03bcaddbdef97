/**
 * The `tsnode serve` flags `cluster up` passes through to its nodes for time shards and
 * node-managed retention: to every node, and per node (`--node-flags 2:--no-sweep-api`) for a
 * mixed ring of sweep-era and node-managed nodes. The nodes validate the values themselves.
 */
import { InvalidValueError } from '../errors.js';

/** The flags passed through, by option name: `[serve flag, takes a value]`. */
export const SHARD_SERVE_FLAGS = {
  shards: ['--shards', true],
  histogramShards: ['--histogram-shards', true],
  rawShard: ['--raw-shard', true],
  retention: ['--retention', true],
  retentionInterval: ['--retention-interval', true],
  noSweepApi: ['--no-sweep-api', false],
} as const;

export type ShardServeValues = Partial<Record<Exclude<keyof typeof SHARD_SERVE_FLAGS, 'noSweepApi'>, string>> & { noSweepApi?: boolean };

/** The serve arguments for every node. */
export function shardServeArgs(values: ShardServeValues): string[] {
  const args: string[] = [];
  for (const [key, [name, takesValue]] of Object.entries(SHARD_SERVE_FLAGS) as Array<[keyof typeof SHARD_SERVE_FLAGS, readonly [string, boolean]]>) {
    const v = values[key];
    if (takesValue && typeof v === 'string') args.push(name, v);
    else if (!takesValue && v === true) args.push(name);
  }
  return args;
}

/**
 * `--node-flags 2:--no-sweep-api --retention nnt:60=1d` (repeatable): extra serve arguments for
 * node 2 (nodes count from 1), which come after the ring-wide ones and so override them. Only the
 * pass-through flags are accepted, each with its value where it takes one.
 */
export function parseNodeFlags(items: readonly string[], count: number, field = '--node-flags'): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const allowed = new Map<string, boolean>(Object.values(SHARD_SERVE_FLAGS).map(([name, takes]) => [name, takes]));
  const names = [...allowed.keys()].join(', ');
  for (const item of items) {
    const m = /^(\d+):(.*)$/.exec(item.trim());
    const index = m ? Number(m[1]) : NaN;
    if (!m || index < 1 || index > count) {
      throw new InvalidValueError(
        field,
        item,
        `${JSON.stringify(item)} is not <node>:<flags> for one of the ${count} node(s)`,
        `e.g. ${field} "2:--no-sweep-api --retention nnt:60=52w"`,
      );
    }
    const words = m[2]!.trim().split(/\s+/).filter(Boolean);
    const args = out.get(index) ?? [];
    for (let i = 0; i < words.length; i++) {
      const takes = allowed.get(words[i]!);
      if (takes === undefined) throw new InvalidValueError(field, item, `${JSON.stringify(words[i])} is not a flag cluster up passes to a node`, `use ${names}`);
      if (takes && (i + 1 >= words.length || words[i + 1]!.startsWith('--'))) throw new InvalidValueError(field, item, `${words[i]} needs a value`, `e.g. ${words[i]} <value>`);
      args.push(...words.slice(i, takes ? i + 2 : i + 1));
      if (takes) i++;
    }
    out.set(index, args);
  }
  return out;
}
