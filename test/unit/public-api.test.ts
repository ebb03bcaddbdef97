import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

// The library's public API, name by name. A change to either list is a change to what scripts
// can import from 'tsnode': make it on purpose (and say so in the changelog), never as a side
// effect of moving code around.
const VALUES = [
  'ADVISORY_LIMIT_HEADER', 'AGE_EXPECTED', 'AGE_UNITS', 'ALWAYS_REDACTED', 'AbortedError', 'AckCountError',
  'CodecError', 'DATA_TYPES', 'DEFAULT_ENGINE', 'DEFAULT_HEADER_PREFIX', 'DEFAULT_LOST_AFTER_MS', 'DEFAULT_MAX_ANSWER_BYTES',
  'DEFAULT_MAX_BUCKETS', 'DEFAULT_POLL_INTERVAL_MS', 'DEFAULT_PORT', 'DEFAULT_RETRY', 'DEFAULT_ROLLUPS', 'DEFAULT_ROLLUP_TYPE',
  'DEFAULT_TIMEOUTS', 'DiscoveryError', 'ENGINES', 'FINAL_STEP_STATES', 'FINAL_SWEEP_STATES', 'HEADER_PREFIXES',
  'HeaderError', 'MAX_AGE_SECONDS', 'MAX_METRIC_LENGTH', 'MAX_RECORD_BYTES', 'MAX_RING_SLOTS', 'MEMBER_OF_TYPE',
  'NO_RETRY', 'NO_TOPOLOGY', 'NUMERIC_FIELDS', 'NodeClient', 'NodeHttpError', 'NodeRequestError',
  'PROBE_RETRY', 'PolicyBuilder', 'PolicyError', 'ProtocolError', 'RECORD_KINDS', 'REDACTED',
  'RESULTS_LIMITED_HEADER', 'ROLLUP_MEMBERS', 'ROLLUP_TYPES', 'ROLLUP_TYPE_ALIASES', 'RecordSyntaxError', 'ReplayStateError',
  'ReplayUsageError', 'RetentionError', 'Ring', 'SPAN_EXPECTED', 'SPAN_FORMAT', 'SPAN_TYPES',
  'STATUS_ANSWER_BYTES', 'STEP_STATES', 'SWEEP_HEADER', 'SWEEP_RESULTS', 'SourceError', 'SweepNotConfirmedError',
  'SweepRefusedError', 'TIMESTAMP_FORMAT', 'TopologyError', 'UUID_RE', 'UnknownSpanError', 'UnsafeFileError',
  'UnsafeWildcardError', 'WILDCARD', 'WRITE_ANSWER_BYTES', 'applyRetention', 'assessPreflight', 'backoffDelay',
  'baselineOf', 'buildHeaders', 'buildSweepHeaders', 'canonicalRollupType', 'checkAge', 'checkCoverage',
  'checkNode', 'checkSpanKey', 'checkSpans', 'checkTopology', 'classify', 'classifyDeleteFailure',
  'clusterCheck', 'createAgent', 'describeAction', 'describeRule', 'discoverRing', 'duplicateIdentities',
  'errorBodySchema', 'fanOut', 'fetchTopology', 'formatAge', 'formatFromBytes', 'formatFromName',
  'formatIssues', 'formatLocation', 'formatRule', 'formatSpan', 'formatTimestamp', 'gatherClusterFacts',
  'inspectCluster', 'isBareSeconds', 'isDataType', 'isIdle', 'isSecretHeader', 'isUuid',
  'isoSeconds', 'judgeCluster', 'limiter', 'loadState', 'locateMetric', 'locateSchema',
  'markOutcome', 'markSending', 'markStarted', 'markWatching', 'metricKey', 'msFromSeconds',
  'newEvidence', 'newRetentionRunId', 'newRun', 'nextAction', 'nodeApiUrl', 'nodeStateSchema',
  'nodeStatsSchema', 'normaliseStatus', 'observeFailure', 'observeStatus', 'openRecords', 'ownerClients',
  'parseAge', 'parseHeaderLine', 'parsePolicyFile', 'parseRules', 'parseRunState', 'parseSecondsList',
  'parseSpan', 'parseSweepHeaders', 'parseTimestamp', 'planFromJson', 'planRetention', 'planToJson',
  'policyFormatOf', 'policyToObject', 'pollUntilIdle', 'preflightSweep', 'probeNode', 'proxyFromEnv',
  'recheckNode', 'recordIssue', 'recordShowsCompleted', 'redactHeaders', 'redactUrlCredentials', 'reportCheck',
  'resumeRun', 'ringFromTopology', 'rollupAllRowsSchema', 'rollupAnswerBytes', 'rollupBuckets', 'rollupRowsSchema',
  'rulesOf', 'runClusterSweep', 'runFingerprint', 'runPreflightChecks', 'runStateToJson', 'runningTypes',
  'saveState', 'scrubSecrets', 'secondsFromMs', 'selfFromState', 'selfFromStats', 'serializeRunState',
  'settled', 'slotLocation', 'smallestSpan', 'sortRules', 'splitHeaderList', 'startAndWait',
  'statSource', 'summarise', 'summariseRun', 'surveyNodes', 'sweepHeaderName', 'sweepHeaderNamesUsed',
  'sweepOneNode', 'systemClock', 'topologyFromJson', 'topologyFromNodeArray', 'topologyFromXml', 'topologyHash',
  'topologyToFile', 'topologyToNodeArray', 'topologyToXml', 'validateHeader', 'validateHistogramRecord', 'validateNntRecord',
  'validateTextRecord', 'wireStatus', 'wireSweepStatusSchema', 'withRetry', 'writeRecords', 'writeSpan',
];

const TYPES = [
  'AgeCheck', 'AgentOptions', 'Aggregate', 'ApplyRetentionOptions', 'CallOptions', 'Clock',
  'ClusterCheckOptions', 'ClusterCheckReport', 'ClusterFacts', 'ClusterSweepOptions', 'ClusterSweepResult', 'ClusterView',
  'CoverageOutcome', 'CoverageReport', 'CoverageVerdict', 'DataType', 'DeclaredSpans', 'DiscoveredNode',
  'DiscoveredRing', 'DiscoveryErrorCode', 'Engine', 'ErrorBody', 'FinalStepState', 'FinalSweepState',
  'FormatChoice', 'HeaderPrefix', 'HistogramRecord', 'HttpRequestPlan', 'InputReport', 'InputState',
  'KeptForever', 'KeptJson', 'KindCheck', 'LastSweep', 'ListedFacts', 'ListedNode',
  'LocateResult', 'NextAction', 'NntRecord', 'NodeCheckOptions', 'NodeClientOptions', 'NodeErrorCode',
  'NodePlan', 'NodePlanJson', 'NodeReport', 'NodeRun', 'NodeRunSummary', 'NodeSelf',
  'NodeSpans', 'NodeState', 'NodeStep', 'NodeStepJson', 'NodeSurvey', 'NodeSweepOptions',
  'NodeSweepResult', 'NodeSweepState', 'NumericField', 'Outcome', 'PlanJson', 'PlanOptions',
  'PlanStep', 'Policy', 'PolicyFormat', 'PolicyLocation', 'PolicyRule', 'PollFailureKind',
  'PollOptions', 'PollResult', 'PollVerdictState', 'Preflight', 'PreflightCheck', 'PreflightNode',
  'PreflightProblem', 'ProbedNode', 'ProtocolErrorCode', 'ProxySettings', 'RawRecord', 'ReadHandle',
  'ReadOptions', 'RecheckResult', 'RecordFormat', 'RecordIssue', 'RecordKind', 'RejectEntry',
  'ReplayEvent', 'ReplayOptions', 'ReplayProgress', 'ReplayResult', 'ReplayState', 'RequestLogEntry',
  'RetentionErrorCode', 'RetentionEvent', 'RetentionPlan', 'RetentionResult', 'RetryPolicy', 'RingNode',
  'RingSide', 'RingTargets', 'RollupAll', 'RollupAllRow', 'RollupColumns', 'RollupMember',
  'RollupPoint', 'RollupQuery', 'RollupResult', 'RollupRow', 'RollupType', 'RollupValue',
  'RuleJson', 'RunOutcome', 'RunState', 'RunStateJson', 'SettledCounts', 'SmallestSpan',
  'SourceInfo', 'SpanCheck', 'SpanDecision', 'SpanFacts', 'SpanProblem', 'SpanSource',
  'SpanType', 'Splitter', 'SplitterStart', 'StartOptions', 'StepJson', 'StepRecord',
  'StepRecordJson', 'StepState', 'StopReason', 'SurveyOptions', 'SweepEvent', 'SweepEvidence',
  'SweepHeaderKey', 'SweepListener', 'SweepRequest', 'SweepResult', 'SweepStatus', 'SweepSummary',
  'Target', 'TextRecord', 'Timeouts', 'TimestampOptions', 'TlsOptions', 'Topology',
  'TypeStatus', 'UnknownSpan', 'ValidateOptions', 'Validated', 'Verdict', 'WireLocate',
  'WireNodeState', 'WireNodeStats', 'WireSweepStatus', 'WriteAck',
];

const source = readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8');

describe('the public API (src/index.ts)', () => {
  it('names what it exports: no export * of internal modules', () => {
    expect(source).not.toMatch(/export \*/);
  });

  it('exports exactly these values', () => {
    expect(Object.keys(api).sort()).toEqual([...VALUES].sort());
  });

  it('exports exactly these types', () => {
    const types = [...source.matchAll(/\btype (\w+)\b/g)].map((m) => m[1]!);
    // `export type { A, B }` blocks name several types after one keyword.
    for (const m of source.matchAll(/export type \{([^}]*)\}/g)) types.push(...m[1]!.split(',').map((s) => s.trim()).filter(Boolean));
    expect([...new Set(types)].sort()).toEqual([...TYPES].sort());
  });
});
