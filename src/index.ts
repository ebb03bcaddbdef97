/** tsnode's library API: everything the CLI does, callable from scripts. */
export * from './protocol/index.js';
export { NodeClient, type NodeClientOptions, type RollupResult, type RollupColumns, type CallOptions } from './client/node-client.js';
export type { RollupPoint } from './client/rollup-rows.js';
export type { WriteAck } from './client/answers.js';
export { fanOut, type Outcome } from './client/fan-out.js';
export { createAgent, proxyFromEnv, type AgentOptions, type TlsOptions, type ProxySettings } from './client/agent.js';
export {
  redactHeaders,
  isSecretHeader,
  parseHeaderLine,
  splitHeaderList,
  buildHeaders,
  validateHeader,
  scrubSecrets,
  redactUrlCredentials,
  HeaderError,
  REDACTED,
  ALWAYS_REDACTED,
} from './client/headers.js';
export { NodeRequestError, NodeHttpError, AbortedError, type NodeErrorCode } from './client/errors.js';
export { DEFAULT_RETRY, NO_RETRY, withRetry, backoffDelay, type RetryPolicy } from './client/retry.js';
export { DEFAULT_TIMEOUTS, DEFAULT_MAX_ANSWER_BYTES, type Timeouts, type RequestLogEntry } from './client/http.js';
export { STATUS_ANSWER_BYTES, WRITE_ANSWER_BYTES, rollupAnswerBytes, rollupBuckets } from './client/answer-limits.js';
export {
  systemClock,
  type Clock,
} from './client/clock.js';
export {
  limiter,
} from './client/concurrency.js';
export {
  FINAL_SWEEP_STATES,
  type NodeSweepState,
  type FinalSweepState,
  type SweepEvent,
  type SweepListener,
} from './client/sweep-states.js';
export {
  preflightSweep,
  assessPreflight,
  runningTypes,
  baselineOf,
  runPreflightChecks,
  SweepRefusedError,
  type Preflight,
  type PreflightNode,
  type PreflightCheck,
  type PreflightProblem,
} from './client/sweep-preflight.js';
export {
  pollUntilIdle,
  recheckNode,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_LOST_AFTER_MS,
  type PollOptions,
  type PollResult,
  type RecheckResult,
} from './client/sweep-poll.js';
export {
  sweepOneNode,
  type NodeSweepResult,
  type NodeSweepOptions,
} from './client/sweep-node.js';
export {
  runClusterSweep,
  startAndWait,
  summarise,
  SweepNotConfirmedError,
  type SweepSummary,
  type ClusterSweepResult,
  type ClusterSweepOptions,
  type StartOptions,
} from './client/sweep.js';
export {
  newEvidence,
  observeStatus,
  observeFailure,
  settled,
  classify,
  classifyDeleteFailure,
  recordShowsCompleted,
  type SweepEvidence,
  type Verdict,
  type PollVerdictState,
  type PollFailureKind,
} from './client/sweep-evidence.js';
export * from './records/index.js';
export * from './replay/index.js';
export * from './ring/index.js';
export {
  discoverRing,
  probeNode,
  fetchTopology,
  ringFromTopology,
  selfFromState,
  selfFromStats,
  DiscoveryError,
  type DiscoveryErrorCode,
  type DiscoveredRing,
  type DiscoveredNode,
  type NodeSelf,
} from './client/discovery.js';
export { checkCoverage, type CoverageReport, type CoverageVerdict, type ListedNode } from './client/coverage.js';
export { checkSpans, smallestSpan, type SpanCheck, type SpanFacts, type SpanProblem, type SmallestSpan } from './client/spans.js';
export { inspectCluster, locateMetric, type ClusterView, type NodeReport, type NodeState, type LocateResult } from './client/cluster-view.js';
export {
  surveyNodes,
  ownerClients,
  writeSpan,
  PROBE_RETRY,
  type NodeSurvey,
  type ProbedNode,
  type RingTargets,
  type SurveyOptions,
  type SpanDecision,
} from './client/routing.js';
export {
  gatherClusterFacts,
  judgeCluster,
  clusterCheck,
  reportCheck,
  duplicateIdentities,
  type ClusterFacts,
  type ListedFacts,
  type ClusterCheckReport,
  type ClusterCheckOptions,
  type CoverageOutcome,
  type DeclaredSpans,
} from './client/sweep-checks.js';
export * from './retention/index.js';
