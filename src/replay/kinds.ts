/**
 * What the kind of a replay's records changes in the pipeline: the node endpoint each batch goes
 * to, and the resume check that a state file is continued by a run of the same kind (its saved
 * positions count records of that kind only). Everything else (batching, routing to the owners,
 * rejects, resume) is the same for every kind: the store places text and histogram data by the
 * same `<uuid>-<metric>` key as numeric data (the production Go client's WriteText and
 * WriteHistogram pick the node with FindMetricNodeIDs(id, metric), as for numeric writes).
 */
import type { WriteAck } from '../client/answers.js';
import type { CallOptions, NodeClient } from '../client/node-client.js';
import type { RecordKind } from '../records/kinds.js';
import { ReplayStateError, type ReplayState } from './state.js';

export type WriteCall = CallOptions & { method?: 'POST' | 'PUT' };

/** The write of one kind: `/write/nnt`, `/write/text` or `/histogram/write`. */
export function writerFor(kind: RecordKind): (client: NodeClient, body: Uint8Array, call: WriteCall) => Promise<WriteAck> {
  switch (kind) {
    case 'nnt':
      return (client, body, call) => client.writeNnt(body, call);
    case 'text':
      return (client, body, call) => client.writeText(body, call);
    case 'histogram':
      return (client, body, call) => client.writeHistogram(body, call);
  }
}

/** The kind a state file was saved by (files of older versions knew numeric records only). */
export function savedKind(state: Pick<ReplayState, 'kind'>): RecordKind {
  return state.kind ?? 'nnt';
}

/** Refuses to resume a state file saved by a run of another kind. */
export function checkSavedKind(path: string, state: Pick<ReplayState, 'kind'>, kind: RecordKind): void {
  const saved = savedKind(state);
  if (saved === kind) return;
  throw new ReplayStateError(
    `state file ${path} was saved by a write of ${saved} records, and this write is of ${kind} records`,
    `resume with --kind ${saved}, or drop --resume to start over as ${kind}`,
  );
}
