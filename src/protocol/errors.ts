import type { z } from 'zod';
import { TsnodeError } from '../tsnode-error.js';

/** Stable error codes the node puts in `code` (spec part B). */
export type ProtocolErrorCode =
  | 'bad_request'
  | 'invalid_header'
  | 'invalid_query'
  | 'invalid_json'
  | 'invalid_record'
  | 'invalid_uuid'
  | 'not_found'
  | 'method_not_allowed'
  | 'body_too_large'
  | 'too_many_buckets'
  | 'request_timeout'
  | 'disk_full'
  | 'store_unavailable'
  | 'overloaded'
  | 'unauthorized'
  | 'owners_unreachable'
  | 'internal';

/**
 * A request the contract rejects. The server turns it into an error body; the client
 * raises it when it validates its own input against the same rules.
 */
export class ProtocolError extends TsnodeError {
  readonly status: number;
  declare readonly code: ProtocolErrorCode;
  readonly details: Record<string, unknown>;
  constructor(status: number, code: ProtocolErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message);
    this.name = 'ProtocolError';
    this.status = status;
    this.details = details;
  }

  toBody(): ErrorBody {
    // error and code first (what a human reads), then the details; details never override them.
    const body: ErrorBody = { error: this.message, code: this.code };
    for (const [k, v] of Object.entries(this.details)) if (k !== 'error' && k !== 'code') body[k] = v;
    return body;
  }
}

/** Every error response is a JSON object with at least these two members. */
export interface ErrorBody {
  error: string;
  code?: string;
  [member: string]: unknown;
}

/** Renders zod issues as `path: message` lines, the project's one format for validation errors. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string {
  return issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))].filter(Boolean).join('.').replace(/\.\[/g, '[');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
