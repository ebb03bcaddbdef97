/**
 * tsnode's library API: the verbs a script needs and their types. Every runtime value is listed in
 * docs/library.md, and test/unit/public-api.test.ts holds this file to that list: a name not here
 * is internal and may change without notice. Add one only when a script truly needs it, and say
 * so in docs/library.md and the changelog. Types cost nothing at run time: export the ones a
 * public function's options and results are made of.
 */
// Errors: one namespace (`errors.NodeRequestError`, `errors.PolicyError`, ...), and their base:
// `err instanceof TsnodeError` for any of them, `err.code` for which.
export * as errors from './errors.js';
export { TsnodeError } from './tsnode-error.js';

// One node, and many at once.
export { NodeClient, type CallOptions, type NodeClientOptions, type RollupColumns, type RollupResult, type TagDeleteScope } from './client/node-client.js';
export type { RollupPoint, RowsSoFar, ValueDigits } from './client/rollup-rows.js';
export type { WriteAck } from './client/answers.js';
export { createAgent, type AgentOptions, type ProxySettings, type TlsOptions } from './client/agent.js';
export { DEFAULT_RETRY, NO_RETRY, type RetryPolicy } from './client/retry.js';
export type { RequestLogEntry, Timeouts } from './client/http.js';
export { fanOut, type Outcome } from './client/fan-out.js';
export type { Clock } from './client/clock.js';

// The ring: topologies, placement, discovery, what the nodes say about themselves.
export { topologyFromJson, type RingNode, type RingSide, type Topology } from './ring/topology.js';
export { Ring, topologyHash } from './ring/placement.js';
export { topologyFromXml } from './ring/xml.js';
export { discoverRing, type DiscoveredNode, type DiscoveredRing, type NodeSelf } from './client/discovery.js';
export { ownerClients, type RingTargets } from './client/routing.js';
export { inspectCluster, locateMetric, type ClusterView, type LocateResult, type NodeReport, type NodeState } from './client/cluster-view.js';
export { readReplicationLag, type LagFrom, type LagReport, type NodeLag } from './client/replication-lag.js';

// Destructive runs (src/run/): the cluster sweep and its cancel, as the CLI runs them.
export { runClusterSweep, type ClusterSweepOptions, type ClusterSweepRun, type PreflightExtension, type SweepConfirmation, type SweepStage } from './run/sweep.js';
export { runSweepCancel, type CancelRow, type SweepCancelOptions, type SweepCancelRun } from './run/cancel.js';
export type { CarriedFlags, CatchUp } from './run/catch-up.js';
export type { NotSwept, RunExitCode, SweptEarlier } from './run/outcome.js';
export type { RunIdentity, RunRecordHooks } from './run/refusal.js';
export type * from './run/records.js';
export type { ClusterSweepResult, StartOptions, SweepSummary } from './client/sweep.js';
export type { FinalSweepState, NodeSweepState, SweepEvent, SweepListener } from './client/sweep-states.js';
export type { Preflight, PreflightCheck, PreflightNode, PreflightProblem } from './client/sweep-preflight.js';
export type { NodeSweepResult } from './client/sweep-node.js';
export type { SweepEvidence, Verdict } from './client/sweep-evidence.js';
export {
  clusterCheck,
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
export type { CoverageReport, CoverageVerdict, ListedNode } from './client/coverage.js';

// Retention: policies, plans, runs, verification and receipts.
export { parseRules, type Policy, type PolicyRule, type SpanType } from './retention/policy.js';
export { parsePolicyFile, type PolicyFormat } from './retention/policy-file.js';
export { parseAge, formatAge } from './retention/age.js';
export type { PolicyLocation, UnknownSpan } from './retention/errors.js';
export {
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
export { planFromJson, planToJson, type KeptJson, type NodePlanJson, type NodeStepJson, type PlanJson, type RuleJson, type StepJson } from './retention/plan-json.js';
export {
  parseRunState,
  resumeRun,
  serializeRunState,
  type FinalStepState,
  type NodeRun,
  type NodeRunSummary,
  type RunOutcome,
  type RunState,
  type RunStateJson,
  type StepRecord,
  type StepRecordJson,
  type StepState,
} from './retention/run-state.js';
export { applyRetention, type ApplyRetentionOptions, type RetentionEvent, type RetentionNodeResult, type RetentionResult } from './retention/apply.js';
export { runRetention, type RetentionRun, type RetentionRunOptions } from './run/retention.js';
export {
  verifyOutcome,
  verifyRetention,
  type CheckSpan,
  type NodeVerification,
  type RetentionCheck,
  type RetentionVerdict,
  type VerifyNodeInput,
  type VerifyReport,
} from './retention/verify.js';
export { verifyReportToJson, type RetentionCheckJson, type VerifyReportJson } from './retention/verify-json.js';
export { gatherRetentionFacts, type InventoryOptions, type NodeRetentionFacts } from './client/inventory.js';
export {
  makeReceipt,
  receiptToJson,
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

// Find and delete by tag query (the delete as `tsnode delete` runs it, on the run core).
export { parseTagQuery, type Pattern, type TagQuery } from './tags/query.js';
export { countAcross, findAcross, type FindOptions, type FindResult, type FoundAcross, type NodeCount, type NodeFind } from './client/tag-find.js';
export {
  runDelete,
  type DeleteConfirmation,
  type DeleteRun,
  type DeleteRunOptions,
  type DeleteSpec,
  type DeleteStage,
  type DeleteTotals,
  type NodeOutcome as DeleteNodeOutcome,
} from './run/delete.js';
export type { DeleteProgress, LoopEnd, MetricKey, NodeDeletion, NodeProof, TagDeleteRequest, NodeLook as DeleteLook } from './client/tag-delete.js';

// Writing and reading records.
export { writeRecords } from './replay/replay.js';
export type { InputReport, ReplayEvent, ReplayOptions, ReplayProgress, ReplayResult, StopReason, WriteTarget, NodeReport as WriteNodeReport } from './replay/types.js';
export type { Position, RejectEntry } from './records/batch.js';
export { openRecords, statSource, type FormatChoice, type ReadHandle, type ReadOptions, type RecordFormat, type SourceInfo } from './records/reader.js';
export { recordIssue, type KindCheck, type RecordKind } from './records/kinds.js';
export type { RawRecord } from './records/splitter.js';
export type { Aggregate, HistogramRecord, NntRecord, NumericField, RecordIssue, TextRecord } from './protocol/records.js';
export { decodeHistogram, encodeHistogram, type DecodedHistogram, type HistogramBins } from './protocol/histogram.js';

// The wire's words: times, spans, data types, rollups, headers, statuses.
export { formatSpan, formatTimestamp, parseSpan, parseTimestamp, type TimestampOptions } from './protocol/codecs.js';
export { DATA_TYPES, DEFAULT_PORT, ROLLUP_TYPES, type DataType, type Engine, type RollupMember, type RollupType } from './protocol/types.js';
export { HEADER_PREFIXES, type HeaderPrefix, type SweepRequest } from './protocol/headers.js';
export type { LastSweep, SweepResult, SweepStatus, TypeStatus } from './protocol/status.js';
export type { RollupAll, RollupAllRow, RollupQuery, RollupRow, RollupValue } from './protocol/rollup.js';

// A reference node in process (`tsnode serve`); 'tsnode/server' has the rest of the node's API.
import type { NodeHooks, RunningNode } from './server/server.js';
import type { ServerConfig } from './server/config.js';
export type { NodeHooks, RunningNode, ServerConfig };

/**
 * Starts a reference node in this process (`tsnode serve`); `close()` on the result stops it. The
 * node (SQLite's addon, worker threads, its HTTP server) loads on the first call, so a script that
 * only talks to nodes does not load it.
 */
export async function startServer(input?: Partial<ServerConfig>, hooks?: NodeHooks): Promise<RunningNode> {
  const server = await import('./server/server.js');
  // Its defaults are the node's own, not repeated here.
  return server.startServer(input, hooks);
}
