/** tsnode's library API: everything the CLI does, callable from scripts. */
export * from './protocol/index.js';
export { NodeClient, type NodeClientOptions, type RollupPoint, type RollupResult, type RollupColumns, type CallOptions, type WriteAck } from './client/node-client.js';
export { Cluster, fanOut, type Outcome } from './client/cluster.js';
export { createAgent, proxyFromEnv, type AgentOptions, type TlsOptions, type ProxySettings } from './client/agent.js';
export {
  redactHeaders,
  isSecretHeader,
  parseHeaderLine,
  splitHeaderList,
  buildHeaders,
  validateHeader,
  scrubSecrets,
  HeaderError,
  REDACTED,
  ALWAYS_REDACTED,
} from './client/headers.js';
export { NodeRequestError, NodeHttpError, AbortedError, type NodeErrorCode } from './client/errors.js';
export { DEFAULT_RETRY, NO_RETRY, withRetry, backoffDelay, type RetryPolicy } from './client/retry.js';
export { DEFAULT_TIMEOUTS, type Timeouts, type RequestLogEntry } from './client/http.js';
export {
  runClusterSweep,
  preflightSweep,
  assessPreflight,
  startAndWait,
  pollUntilIdle,
  runningTypes,
  summarise,
  systemClock,
  SweepRefusedError,
  SweepNotConfirmedError,
  FINAL_SWEEP_STATES,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_LOST_AFTER_MS,
  type Clock,
  type NodeSweepState,
  type FinalSweepState,
  type SweepEvent,
  type SweepListener,
  type Preflight,
  type PreflightNode,
  type PollOptions,
  type PollResult,
  type NodeSweepResult,
  type SweepSummary,
  type ClusterSweepResult,
  type ClusterSweepOptions,
  type StartOptions,
} from './client/sweep.js';
export * from './records/index.js';
export * from './replay/index.js';
