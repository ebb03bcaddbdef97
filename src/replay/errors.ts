/** The replay's own errors: a run that cannot start, and an acknowledgement that does not add up. */
import { NodeRequestError } from '../client/errors.js';
import { TsnodeError } from '../tsnode-error.js';

/** A replay that cannot start: bad options, or an input or state that does not allow it. */
export class ReplayUsageError extends TsnodeError {
  declare readonly code: 'usage';
  constructor(message: string, hint?: string) {
    super('usage', message, { hint });
    this.name = 'ReplayUsageError';
  }
}

/**
 * A node acknowledged a number of records other than the batch held. Writes are atomic and a
 * resend replaces, so the batch is sent again; if the count stays wrong it is not written.
 */
export class AckCountError extends NodeRequestError {
  constructor(
    node: string,
    readonly acknowledged: number,
    readonly sent: number,
  ) {
    super(
      node,
      'bad_answer',
      acknowledged < sent ? `acknowledged ${acknowledged} of the ${sent} records sent (a short acknowledgement)` : `acknowledged ${acknowledged} records for the ${sent} sent`,
      { retryable: true, hint: "the node's count does not match the request: check the node, or a proxy in front of it" },
    );
    this.name = 'AckCountError';
  }
}
