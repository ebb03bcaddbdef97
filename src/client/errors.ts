/**
 * Why a request to a node did not produce a usable answer. Only `unreachable` and `timeout` mean
 * no answer came; a node that answered something unexpected is `http` (an error status),
 * `bad_answer` (a 2xx the client cannot understand; the message says what was expected) or
 * `no_sweep_api` (a 404 on /sweep_delete: the store removed that API in version 0.19.23) or
 * `too_large` (more bytes than any legitimate answer to that request holds; reading stopped at the cap).
 */
import { TsnodeError } from '../tsnode-error.js';
export type NodeErrorCode = 'unreachable' | 'timeout' | 'http' | 'bad_answer' | 'no_sweep_api' | 'too_large' | 'tls' | 'aborted';

/** Base of every client failure: which node, what happened, whether trying again can help. */
export class NodeRequestError extends TsnodeError {
  readonly node: string;
  declare readonly code: NodeErrorCode;
  readonly retryable: boolean;
  constructor(node: string, code: NodeErrorCode, message: string, opts: { retryable: boolean; hint?: string; cause?: unknown }) {
    super(code, `${node}: ${message}`, opts);
    this.name = 'NodeRequestError';
    this.node = node;
    this.retryable = opts.retryable;
  }
  /** The message without the node prefix, for per-node tables. */
  get detail(): string {
    return this.message.slice(this.node.length + 2);
  }
}

/** The node answered with an error status; `body` is its error object when it sent one. */
export class NodeHttpError extends NodeRequestError {
  readonly status: number;
  readonly errorCode: string | undefined;
  readonly body: Record<string, unknown> | undefined;
  /** From Retry-After, when the node sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(node: string, status: number, message: string, opts: { body?: Record<string, unknown>; errorCode?: string; retryAfterMs?: number; hint?: string }) {
    super(node, 'http', message, { retryable: status === 429 || status >= 500, hint: opts.hint });
    this.name = 'NodeHttpError';
    this.status = status;
    this.errorCode = opts.errorCode;
    this.body = opts.body;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Raised when the run itself was cancelled (Ctrl-C, overall timeout), never retried. */
export class AbortedError extends NodeRequestError {
  constructor(node: string, reason: string) {
    super(node, 'aborted', reason, { retryable: false });
    this.name = 'AbortedError';
  }
}

/**
 * The reason of a signal a named time limit aborted: what the limit bounds and, when a flag sets
 * it, the flag, so the error can say which limit passed ("the overall deadline of the command
 * (--deadline 30s)") instead of guessing. Named `TimeoutError`, like AbortSignal.timeout's reason.
 * An abort reason, never thrown to a caller (the client turns it into a NodeRequestError `timeout`),
 * so no Error subclass.
 */
export class TimeLimitReached {
  readonly name = 'TimeoutError';
  readonly message: string;
  constructor(
    readonly ms: number,
    /** What the limit bounds: `the overall deadline of the command`. */
    readonly what: string,
    readonly flag?: string,
  ) {
    this.message = `${what} (${flag ? `${flag} ` : ''}${ms / 1000}s) passed`;
  }
}

/** An AbortSignal aborted after `ms` with a TimeLimitReached reason (the timer does not keep the process alive). */
export function timeLimitSignal(ms: number, what: string, flag?: string): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new TimeLimitReached(ms, what, flag)), ms).unref();
  return controller.signal;
}
