/** `tsnode delete`: from flags to what is asked of every node. Pure but for the clock it is given. */
import type { TagDeleteRequest } from '../../../client/tag-delete.js';
import type { DeleteSpec } from '../../../run/delete-outcome.js';
import type { DataType } from '../../../protocol/index.js';
import { UUID_RE } from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';
import { checkTagQuery } from '../../tag-query.js';
import { describeTime, parseTime } from '../../time.js';
import { DEFAULT_BATCH, DEFAULT_LIST_LIMIT, DEFAULT_MAX_ROUNDS, type DeleteOptions } from './options.js';

export interface DeletePlan extends DeleteSpec {
  /** `all data` or `nnt,text data before 2026-...`: what goes, in words. */
  scope: string;
}

/** A query selecting one metric by its check, its name and each of its stream tags, every side exact and base64 (no character of the name can break it). */
export function queryForMetric(uuid: string, name: string, tags: ReadonlyArray<{ category: string; value: string }>): string {
  const b = (s: string): string => `b[exact]"${Buffer.from(s, 'utf8').toString('base64')}"`;
  return `and(__check_uuid:${uuid.toLowerCase()},__name:${b(name)}${tags.map((t) => `,${b(t.category)}:${b(t.value)}`).join('')})`;
}

export function planDelete(
  opts: DeleteOptions & { target: string },
  now: number,
  parseName: (metric: string) => { name: string; tags: Array<{ category: string; value: string }> },
): DeletePlan {
  if (opts.full && opts.before !== undefined)
    throw new UsageError('--full and --before: give one', '--full deletes everything of each metric; --before only its data before a time');
  if (opts.types !== undefined && opts.before === undefined) throw new UsageError('--types needs --before', '--full deletes every type');
  let metric: DeletePlan['metric'] = null;
  let query = opts.target;
  if (opts.metric !== undefined) {
    if (!UUID_RE.test(opts.metric)) throw new UsageError(`--metric: ${JSON.stringify(opts.metric)} is not a check UUID`, "tsnode delete --metric <uuid> '<metric name>'");
    if (opts.target === '') throw new UsageError('the metric name is empty');
    metric = { uuid: opts.metric.toLowerCase(), metric: opts.target };
    const parsed = parseName(opts.target);
    query = queryForMetric(metric.uuid, parsed.name, parsed.tags);
  } else {
    checkTagQuery(query);
    if (!opts.full && opts.before === undefined)
      throw new UsageError('say what to delete: --full (everything of each metric) or --before <time> --types <list>', "e.g. tsnode delete 'and(host:web1)' --full");
  }
  const account = opts.account ?? 1;
  const common = { query, account };
  let requests: TagDeleteRequest[];
  let scope: string;
  if (opts.before !== undefined) {
    const before = Math.floor(parseTime(opts.before, '--before', now) / 1000);
    if (before * 1000 > now) throw new UsageError(`--before: ${describeTime(before * 1000)} is in the future`, 'a delete removes data before a past time');
    const types: DataType[] = opts.types ?? ['nnt'];
    requests = types.map((type) => ({ ...common, scope: { kind: 'before', type, before } }));
    scope = `${types.join(',')} data before ${describeTime(before * 1000)}`;
  } else {
    requests = [{ ...common, scope: { kind: 'full' } }];
    scope = 'all data and the names';
  }
  return {
    requests,
    metric,
    query,
    account,
    batch: opts.batch ?? DEFAULT_BATCH,
    maxRounds: opts.maxRounds ?? DEFAULT_MAX_ROUNDS,
    listLimit: opts.listLimit ?? DEFAULT_LIST_LIMIT,
    concurrency: opts.concurrency ?? 32,
    scope,
  };
}
