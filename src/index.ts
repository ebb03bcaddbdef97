/**
 * tsnode's library API: everything the CLI does, callable from scripts. Every name is listed here
 * on purpose (test/unit/public-api.test.ts pins the list): what is not named is internal and may
 * change without notice.
 */

// The wire contract: data types, codecs, headers, status, rollups, records, cluster answers.
export {
  canonicalRollupType,
  DATA_TYPES,
  DEFAULT_ENGINE,
  DEFAULT_PORT,
  DEFAULT_ROLLUP_TYPE,
  DEFAULT_ROLLUPS,
  ENGINES,
  isDataType,
  MEMBER_OF_TYPE,
  ROLLUP_MEMBERS,
  ROLLUP_TYPE_ALIASES,
  ROLLUP_TYPES,
  type DataType,
  type Engine,
  type RollupMember,
  type RollupType,
} from './protocol/types.js';
export {
  CodecError,
  formatSpan,
  formatTimestamp,
  isBareSeconds,
  msFromSeconds,
  parseSecondsList,
  parseSpan,
  parseTimestamp,
  secondsFromMs,
  SPAN_FORMAT,
  TIMESTAMP_FORMAT,
  type TimestampOptions,
} from './protocol/codecs.js';
export { errorBodySchema, formatIssues, ProtocolError, type ErrorBody, type ProtocolErrorCode } from './protocol/errors.js';
export {
  ADVISORY_LIMIT_HEADER,
  buildSweepHeaders,
  DEFAULT_HEADER_PREFIX,
  HEADER_PREFIXES,
  parseSweepHeaders,
  RESULTS_LIMITED_HEADER,
  SWEEP_HEADER,
  sweepHeaderName,
  sweepHeaderNamesUsed,
  type HeaderPrefix,
  type SweepHeaderKey,
  type SweepRequest,
} from './protocol/headers.js';
export {
  isIdle,
  normaliseStatus,
  SWEEP_RESULTS,
  wireStatus,
  wireSweepStatusSchema,
  type LastSweep,
  type SweepResult,
  type SweepStatus,
  type TypeStatus,
  type WireSweepStatus,
} from './protocol/status.js';
export {
  DEFAULT_MAX_BUCKETS,
  rollupAllRowsSchema,
  rollupRowsSchema,
  type RollupAll,
  type RollupAllRow,
  type RollupQuery,
  type RollupRow,
  type RollupValue,
} from './protocol/rollup.js';
export {
  isUuid,
  MAX_METRIC_LENGTH,
  NUMERIC_FIELDS,
  UUID_RE,
  validateHistogramRecord,
  validateNntRecord,
  validateTextRecord,
  type Aggregate,
  type HistogramRecord,
  type NntRecord,
  type NumericField,
  type RecordIssue,
  type TextRecord,
  type Validated,
  type ValidateOptions,
} from './protocol/records.js';
export { decodeHistogram, encodeHistogram, histogramBinName, type DecodedHistogram, type HistogramBins } from './protocol/histogram.js';
export { locateSchema, NO_TOPOLOGY, nodeStateSchema, nodeStatsSchema, type WireLocate, type WireNodeState, type WireNodeStats } from './protocol/cluster.js';

// The ring: topologies, the topology hash and metric placement.
export {
  checkNode,
  checkTopology,
  MAX_RING_SLOTS,
  nodeApiUrl,
  TopologyError,
  topologyFromJson,
  topologyFromNodeArray,
  topologyToFile,
  topologyToNodeArray,
  type NodeCheckOptions,
  type RingNode,
  type RingSide,
  type Topology,
} from './ring/topology.js';
export { metricKey, Ring, slotLocation, topologyHash } from './ring/placement.js';
export { topologyFromXml, topologyToXml } from './ring/xml.js';

// One node: the client, its dispatcher, headers, errors, retries and answer limits.
export { NodeClient, type CallOptions, type NodeClientOptions, type RollupColumns, type RollupResult } from './client/node-client.js';
export type { RollupPoint } from './client/rollup-rows.js';
export type { WriteAck } from './client/answers.js';
export { createAgent, proxyFromEnv, type AgentOptions, type ProxySettings, type TlsOptions } from './client/agent.js';
export {
  ALWAYS_REDACTED,
  buildHeaders,
  HeaderError,
  isSecretHeader,
  parseHeaderLine,
  REDACTED,
  redactHeaders,
  redactUrlCredentials,
  scrubSecrets,
  splitHeaderList,
  validateHeader,
} from './client/headers.js';
export { AbortedError, NodeHttpError, NodeRequestError, type NodeErrorCode } from './client/errors.js';
export { backoffDelay, DEFAULT_RETRY, NO_RETRY, withRetry, type RetryPolicy } from './client/retry.js';
export { DEFAULT_MAX_ANSWER_BYTES, DEFAULT_TIMEOUTS, type RequestLogEntry, type Timeouts } from './client/http.js';
export { rollupAnswerBytes, rollupBuckets, STATUS_ANSWER_BYTES, WRITE_ANSWER_BYTES } from './client/answer-limits.js';

// Many nodes: fan-out, bounded concurrency, discovery, coverage, spans, routing.
export { fanOut, type Outcome } from './client/fan-out.js';
export { limiter } from './client/concurrency.js';
export { systemClock, type Clock } from './client/clock.js';
export {
  discoverRing,
  DiscoveryError,
  fetchTopology,
  probeNode,
  ringFromTopology,
  selfFromState,
  selfFromStats,
  type DiscoveredNode,
  type DiscoveredRing,
  type DiscoveryErrorCode,
  type NodeSelf,
} from './client/discovery.js';
export { checkCoverage, type CoverageReport, type CoverageVerdict, type ListedNode } from './client/coverage.js';
export { checkSpans, smallestSpan, type SmallestSpan, type SpanCheck, type SpanFacts, type SpanProblem } from './client/spans.js';
export { inspectCluster, locateMetric, type ClusterView, type LocateResult, type NodeReport, type NodeState } from './client/cluster-view.js';
export { ownerClients, PROBE_RETRY, surveyNodes, writeSpan, type NodeSurvey, type ProbedNode, type RingTargets, type SpanDecision, type SurveyOptions } from './client/routing.js';

// Sweeps: preflight, one node, polling, the cluster run, the evidence and the checks.
export { FINAL_SWEEP_STATES, type FinalSweepState, type NodeSweepState, type SweepEvent, type SweepListener } from './client/sweep-states.js';
export {
  assessPreflight,
  baselineOf,
  preflightSweep,
  runningTypes,
  runPreflightChecks,
  SweepRefusedError,
  type Preflight,
  type PreflightCheck,
  type PreflightNode,
  type PreflightProblem,
} from './client/sweep-preflight.js';
export { sweepOneNode, type NodeSweepOptions, type NodeSweepResult } from './client/sweep-node.js';
export { describeLag, hasLag, lateRecords, readReplicationLag, type LagFrom, type LagReport, type NodeLag } from './client/replication-lag.js';
export { lagCheck, lookForLateData, markLateData, type LagCheckOptions, type LateLook, type ReplicationLagOption } from './client/sweep-lag.js';
export { DEFAULT_LOST_AFTER_MS, DEFAULT_POLL_INTERVAL_MS, pollUntilIdle, recheckNode, type PollOptions, type PollResult, type RecheckResult } from './client/sweep-poll.js';
export { startAndWait, summarise, SweepNotConfirmedError, type ClusterSweepResult, type StartOptions, type SweepSummary } from './client/sweep.js';
// The destructive-run core: the cluster sweep as the CLI runs it, refusals, locks, outcomes.
export { runClusterSweep, type ClusterSweepOptions, type ClusterSweepRun, type PreflightExtension, type SweepConfirmation, type SweepStage } from './run/sweep.js';
export { runDelete, type DeleteConfirmation, type DeleteRun, type DeleteRunOptions, type DeleteSpec, type DeleteStage, type NodeOutcome } from './run/delete.js';
export { RunInterruptedError } from './run/errors.js';
export { RunLockedError } from './run/lock.js';
export {
  classify,
  classifyDeleteFailure,
  newEvidence,
  observeFailure,
  observeStatus,
  recordShowsCompleted,
  settled,
  type PollFailureKind,
  type PollVerdictState,
  type SweepEvidence,
  type Verdict,
} from './client/sweep-evidence.js';
export {
  clusterCheck,
  duplicateIdentities,
  gatherClusterFacts,
  judgeCluster,
  reportCheck,
  type ClusterCheckOptions,
  type ClusterCheckReport,
  type ClusterFacts,
  type CoverageOutcome,
  type DeclaredSpans,
  type ListedFacts,
} from './client/sweep-checks.js';

// Record files: reading them as streams, with positions and errors.
export { MAX_RECORD_BYTES, RecordSyntaxError, type RawRecord, type Splitter, type SplitterStart } from './records/splitter.js';
export {
  formatFromBytes,
  formatFromName,
  openRecords,
  SourceError,
  statSource,
  type FormatChoice,
  type ReadHandle,
  type ReadOptions,
  type RecordFormat,
  type SourceInfo,
} from './records/reader.js';
export { RECORD_KINDS, recordIssue, type KindCheck, type RecordKind } from './records/kinds.js';
export type { Position, RejectEntry } from './records/batch.js';

// Replay: writing records to nodes, with rejects and resumable state.
export { writeRecords } from './replay/replay.js';
export type { InputReport, ReplayEvent, ReplayOptions, ReplayProgress, ReplayResult, StopReason, Target } from './replay/types.js';
export { AckCountError, ReplayUsageError } from './replay/errors.js';
export { loadState, ReplayStateError, saveState, type InputState, type ReplayState, type SettledCounts } from './replay/state.js';
export { UnsafeFileError } from './replay/private-file.js';

// Retention: policies, plans, runs and applying them.
export {
  formatLocation,
  PolicyError,
  RetentionError,
  UnknownSpanError,
  UnsafeWildcardError,
  type PolicyLocation,
  type RetentionErrorCode,
  type UnknownSpan,
} from './retention/errors.js';
export { AGE_EXPECTED, AGE_UNITS, checkAge, formatAge, MAX_AGE_SECONDS, parseAge, type AgeCheck } from './retention/age.js';
export {
  checkSpanKey,
  formatRule,
  parseRules,
  PolicyBuilder,
  policyToObject,
  rulesOf,
  sortRules,
  SPAN_EXPECTED,
  SPAN_TYPES,
  WILDCARD,
  type Policy,
  type PolicyRule,
  type SpanType,
} from './retention/policy.js';
export { parsePolicyFile, policyFormatOf, type PolicyFormat } from './retention/policy-file.js';
export {
  describeRule,
  planRetention,
  type HttpRequestPlan,
  type KeptForever,
  type NodePlan,
  type NodeSpans,
  type NodeStep,
  type PlanOptions,
  type PlanStep,
  type RetentionPlan,
  type SpanSource,
} from './retention/plan.js';
export { isoSeconds, planFromJson, planToJson, type KeptJson, type NodePlanJson, type NodeStepJson, type PlanJson, type RuleJson, type StepJson } from './retention/plan-json.js';
export {
  describeAction,
  FINAL_STEP_STATES,
  markOutcome,
  markSending,
  markStarted,
  markWatching,
  newRun,
  nextAction,
  parseRunState,
  resumeRun,
  runFingerprint,
  runStateToJson,
  serializeRunState,
  STEP_STATES,
  summariseRun,
  type FinalStepState,
  type NextAction,
  type NodeRun,
  type NodeRunSummary,
  type RunOutcome,
  type RunState,
  type RunStateJson,
  type StepRecord,
  type StepRecordJson,
  type StepState,
} from './retention/run-state.js';
export { applyRetention, newRetentionRunId, type ApplyRetentionOptions, type RetentionEvent, type RetentionNodeResult, type RetentionResult } from './retention/apply.js';
// Proof of retention: verify a policy against the nodes' shard inventories, and receipts of what a run removed.
export {
  checkSpan,
  VERDICTS,
  verifyOutcome,
  verifyRetention,
  type CheckSpan,
  type NodeVerification,
  type RetentionCheck,
  type RetentionVerdict,
  type VerifyNodeInput,
  type VerifyReport,
} from './retention/verify.js';
export { checkToJson, verifyReportToJson, type RetentionCheckJson, type VerifyReportJson } from './retention/verify-json.js';
export { fetchInventory, fetchRetentionFacts, gatherRetentionFacts, managedByOf, type InventoryOptions, type NodeRetentionFacts } from './client/inventory.js';
export {
  makeReceipt,
  receiptToJson,
  receiptTotals,
  takeLook,
  type NodeLook,
  type NodeReceipt,
  type Receipt,
  type ReceiptJson,
  type ReceiptSpan,
  type ReceiptSpanJson,
  type ReceiptSpanKey,
} from './client/receipt.js';
export type { ManagedBy, NodeInventory, NodeRetentionConfig, RollupFs, ShardList, ShardRange } from './protocol/shards.js';

// Every error class, one namespace: `errors.TsnodeError` is the base of all (docs/architecture.md, Errors).
import * as errors from './errors.js';
export { errors };
