import { flag, type FlagValues } from './flags.js';

/** Node's timers hold at most 2^31-1 ms (24.8 days); a longer timeout would fire at once. */
const MAX_TIMEOUT = 24 * 86_400_000;
/** Strings over this many UTF-16 units cannot be made in V8 (~512 MiB): a larger answer cannot be read as text. */
const MAX_ANSWER = 512 * 1024 ** 2;

import { HEADER_PREFIXES } from '../protocol/constants.js';

export { HEADER_PREFIXES };

/** How the commands that send sweep DELETEs (sweep, sweep cancel, retention apply) send them. */
export function sweepSendFlags() {
  return {
    headerPrefix: flag.choice(
      '--header-prefix <prefix>',
      "sweep header prefix: X-Service, or X-Snowth for production nodes (default: the profile's, else X-Service)",
      HEADER_PREFIXES,
      {
        ignoreCase: true,
      },
    ),
    concurrency: flag.count('--concurrency <n>', 'requests in flight at once across the cluster', { default: '32', min: 1, max: 1000 }),
  };
}

/** Where the nodes come from, as flags: `--nodes` or `--seed` (the profile is the global --profile). */
export function nodeSourceFlags() {
  return {
    nodes: flag.string(
      '--nodes <file|list>',
      'node list: a file (one node per line) or a comma list; default: --profile, $TSNODE_NODES, $TSNODE_PROFILE, the current profile, ./nodes.txt, http://127.0.0.1:8112',
      { complete: { kind: 'files' } },
    ),
    seed: flag.string('--seed <url>', 'discover the nodes from one node of the ring: every node of the topology it runs (its /state, then /topology/json|xml/<hash>)', {
      complete: { kind: 'none' },
    }),
  };
}

/**
 * The flags every command that talks to nodes shares, as one table (flags.ts): the node source,
 * timeouts, retries, TLS and headers, each parsed and typed while the command line is read. A
 * command spreads it into its own table: `{ ...networkFlags(), output: flag.output() }`, and hands
 * the values to `openTarget` (node-source.ts). A function, so each command gets its own Options.
 */
export function networkFlags() {
  return {
    ...nodeSourceFlags(),
    connectTimeout: flag.duration('--connect-timeout <duration>', 'TCP/TLS connect timeout per request', { default: '3s', max: MAX_TIMEOUT }),
    headersTimeout: flag.duration('--headers-timeout <duration>', 'longest wait for the response headers of one request', { default: '10s', max: MAX_TIMEOUT }),
    requestTimeout: flag.duration('--request-timeout <duration>', 'longest wait for one complete answer, however slowly it trickles', { default: '30s', max: MAX_TIMEOUT }),
    retries: flag.count('--retries <n>', 'retries for connection errors, timeouts, 429 and 5xx (never for 4xx)', { default: '3', max: 100 }),
    deadline: flag.duration('--deadline <duration>', 'overall bound on all requests of the command, retries included (default: none)', { max: MAX_TIMEOUT }),
    maxAnswer: flag.size(
      '--max-answer <size>',
      'largest answer accepted from a node, e.g. 64MiB (default: sized per request: 256KiB for status and writes, from the range for reads)',
      {
        max: MAX_ANSWER,
      },
    ),
    cacert: flag.string('--cacert <file>', "PEM file of the CA(s) that sign the nodes' certificates (https:// nodes; default: the profile's cacert)", {
      complete: { kind: 'files' },
    }),
    cert: flag.string('--cert <file>', 'PEM client certificate for mutual TLS (with --key)', { complete: { kind: 'files' } }),
    key: flag.string('--key <file>', 'PEM private key of --cert', { complete: { kind: 'files' } }),
    insecure: flag.boolean('--insecure', 'do not verify node certificates (dangerous; warns on every run)'),
    header: flag.repeatable('--header <"Name: value">', "extra request header, repeatable; added to the profile's headers and $TSNODE_HEADERS (one per line or ;-separated)", {
      complete: { kind: 'none' },
    }),
    redact: flag.repeatable('--redact <name>', "keep this header's value out of logs and output, repeatable (Authorization, Cookie, Proxy-Authorization always are)", {
      complete: { kind: 'none' },
    }),
  };
}

/** What an action receives for `networkFlags()`: durations in ms, sizes in bytes, counts as numbers. */
export type NetworkValues = FlagValues<ReturnType<typeof networkFlags>>;

/** A destructive command's --nodes: the same flag, but no ./nodes.txt or default node behind it. */
export function destructiveNodesFlag() {
  return flag.string(
    '--nodes <file|list>',
    'node list: a file (one node per line) or a comma list; default: --profile, $TSNODE_NODES, $TSNODE_PROFILE, the current profile (never ./nodes.txt or the default node)',
    { complete: { kind: 'files' } },
  );
}

/** `--max-clock-skew`: how far this host's clock may be from the nodes' before cut-offs are pinned from it. */
export function clockSkewFlags() {
  return {
    maxClockSkew: flag.duration(
      '--max-clock-skew <duration>',
      "refuse (nothing sent) when this host's clock and a node's (its HTTP Date) differ by more, as cut-offs come from this clock",
      { default: '5m' },
    ),
  };
}
