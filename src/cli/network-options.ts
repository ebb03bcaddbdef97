import { Option, type Command } from 'commander';

/**
 * Flags every command that talks to nodes shares. Declaration only: no network code loaded here.
 * All fields added after the first version are optional, so callers that build flags by hand keep compiling.
 */
export interface NetworkFlags {
  nodes?: string;
  /** A node to discover the ring from (its topology lists the nodes); resolved before the command runs. */
  seed?: string;
  connectTimeout: string;
  requestTimeout: string;
  retries: string;
  /** Until the response headers arrive (per attempt). */
  headersTimeout?: string;
  /** Overall bound on the command's network work, retries included (absent: none beyond per-request timeouts x retries). */
  deadline?: string;
  /** PEM file of the CA(s) that sign the nodes' certificates. */
  cacert?: string;
  /** PEM client certificate and key for mutual TLS. */
  cert?: string;
  key?: string;
  /** Do not verify node certificates (warns on every run). */
  insecure?: boolean;
  /** `Name: value` lines, repeatable. */
  header?: string[];
  /** Further header names to keep out of logs and output. */
  redact?: string[];
  /** One cap on the size of every answer (default: sized per request). */
  maxAnswer?: string;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function addNodesOption(cmd: Command): Command {
  return cmd
    .option(
      '--nodes <file|list>',
      'node list: a file (one node per line) or a comma list; default --seed, then $TSNODE_NODES, then ./nodes.txt, then http://127.0.0.1:8112',
    )
    .option('--seed <url>', "discover the nodes from one node of the ring: every node of the topology it runs (its /state, then /topology/json|xml/<hash>)");
}

export function addNetworkOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--connect-timeout <duration>', 'TCP/TLS connect timeout per request').default('3s'))
    .addOption(new Option('--headers-timeout <duration>', 'longest wait for the response headers of one request').default('10s'))
    .addOption(new Option('--request-timeout <duration>', 'longest wait for one complete answer, however slowly it trickles').default('30s'))
    .addOption(new Option('--retries <n>', 'retries for connection errors, timeouts, 429 and 5xx (never for 4xx)').default('3'))
    .addOption(new Option('--deadline <duration>', 'overall bound on all requests of the command, retries included (default: none)'))
    .addOption(new Option('--max-answer <size>', 'largest answer accepted from a node, e.g. 64MiB (default: sized per request: 256KiB for status and writes, from the range for reads)'))
    .addOption(new Option('--cacert <file>', 'PEM file of the CA(s) that sign the nodes\' certificates (https:// nodes)'))
    .addOption(new Option('--cert <file>', 'PEM client certificate for mutual TLS (with --key)'))
    .addOption(new Option('--key <file>', 'PEM private key of --cert'))
    .addOption(new Option('--insecure', 'do not verify node certificates (dangerous; warns on every run)'))
    .addOption(
      new Option('--header <"Name: value">', 'extra request header, repeatable (also $TSNODE_HEADERS: one per line or ;-separated)').argParser(collect),
    )
    .addOption(
      new Option('--redact <name>', 'keep this header\'s value out of logs and output, repeatable (Authorization, Cookie, Proxy-Authorization always are)').argParser(
        collect,
      ),
    );
}
