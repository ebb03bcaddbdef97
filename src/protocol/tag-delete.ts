/**
 * The tag-query endpoints' wire contract (circonus/product-docs 363d7be `irondb/api/data-deletion.md`,
 * `static/yaml/developer.yaml`): `GET /find/<account>/tags`, `DELETE /full/tags`,
 * `DELETE /full/canonical/<uuid>/<metric>`, and the time-bounded `DELETE /{nnt,text,histogram}/tags`.
 * Header names, the per-metric answer and its status words, the find answer: shared by the node
 * (which answers them) and the client (which reads them).
 */
import type { z } from 'zod';
import type { deleteResultRowSchema, foundMetricSchema } from './schemas.js';
import { HEADER_PREFIXES } from './headers.js';

/** Header suffixes, sent as `X-Snowth-<suffix>` (the store's spelling); nodes accept `X-Service-` too. */
export const TAG_HEADER = {
  account: 'Account-Id',
  confirm: 'Confirm-Delete',
  advisoryLimit: 'Advisory-Limit',
  incomplete: 'Incomplete-Results',
  deleteTime: 'Delete-Time',
  proxied: 'Proxied',
} as const;
export type TagHeaderKey = keyof typeof TAG_HEADER;

/** The name the client sends a header under. */
export function tagHeaderName(key: TagHeaderKey): string {
  return `X-Snowth-${TAG_HEADER[key]}`;
}

/** A header under either prefix (node:http gives lower-case names); undefined when absent. */
export function readTagHeader(headers: Readonly<Record<string, string | string[] | undefined>>, key: TagHeaderKey): { name: string; value: string } | undefined {
  for (const prefix of [...HEADER_PREFIXES].reverse()) {
    const name = `${prefix}-${TAG_HEADER[key]}`;
    const raw = headers[name.toLowerCase()];
    if (raw !== undefined) return { name, value: (Array.isArray(raw) ? raw.join(',') : raw).trim() };
  }
  return undefined;
}

/** The store's default advisory limit for tag-query deletes (the OpenAPI's; data-deletion.md says 100,000). */
export const DEFAULT_TAG_ADVISORY_LIMIT = 10_000;

/**
 * The per-metric status words of `data-deletion.md` ("Wildcard, Tag Query and Check Delete Result
 * Statuses"), lower case as the sample output writes them. A `delete_result` is one of them,
 * optionally followed by ` - <detail>`.
 */
export const DELETE_STATUSES = [
  'bad request',
  'deleted',
  'found',
  'invalid range',
  'no content',
  'not found',
  'not implemented',
  'not local',
  'redirected',
  'server error',
  'unable busy',
  'undefined',
] as const;
export type DeleteStatus = (typeof DELETE_STATUSES)[number];

/** The status word a `delete_result` begins with (case-insensitive; the docs' `ok` reads as `deleted`), or null. */
export function deleteStatusOf(result: string): DeleteStatus | null {
  const word = result.split(' - ')[0]!.trim().toLowerCase();
  if (word === 'ok') return 'deleted';
  return (DELETE_STATUSES as readonly string[]).includes(word) ? (word as DeleteStatus) : null;
}

/** One metric of a tag-query delete answer (deleteResultRowSchema, schemas.ts). */
export type DeleteResultRow = z.infer<typeof deleteResultRowSchema>;
/** One metric of a find answer (foundMetricSchema, schemas.ts). */
export type FoundMetric = z.infer<typeof foundMetricSchema>;
