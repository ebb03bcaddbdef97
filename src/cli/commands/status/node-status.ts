/**
 * What `tsnode status` learns of one node: its sweep status, or why it has none. Shared by the
 * action (which asks) and render.ts (which shows), so neither imports the other.
 */
import type { NodeRequestError } from '../../../client/errors.js';
import type { SweepStatus } from '../../../protocol/index.js';

/**
 * Why a node has no status: `unreachable` (no connection, no answer in time, TLS failed),
 * `no_sweep_api` (a 404: the store removed /sweep_delete in 0.19.23), `error` (an error status),
 * `bad_answer` (it answered, but not a status: too large, not JSON), `lost` (--watch: it stopped
 * answering polls usefully for --lost-after). Only the first means that no answer came.
 */
export type NoStatus = 'unreachable' | 'no_sweep_api' | 'error' | 'bad_answer' | 'lost';

/**
 * One node's answer: its status, or why there is none (`code`: the client's error code, for JSON);
 * `lagSeconds`: its own replication lag (`/state` max_peer_lag), null or absent when it reports none.
 */
export type NodeStatus = ({ node: string; ok: true; status: SweepStatus } | { node: string; ok: false; error: string; why: NoStatus; code: string }) & {
  lagSeconds?: number | null;
};

/** A node that answered something unexpected is not "unreachable". */
export function noStatus(err: NodeRequestError): NoStatus {
  if (err.code === 'unreachable' || err.code === 'timeout' || err.code === 'tls' || err.code === 'aborted') return 'unreachable';
  if (err.code === 'no_sweep_api') return 'no_sweep_api';
  return err.code === 'http' ? 'error' : 'bad_answer';
}
