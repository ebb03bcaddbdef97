import { Option, type Command } from 'commander';

/** Flags every command that talks to nodes shares. Declaration only: no network code loaded here. */
export interface NetworkFlags {
  nodes?: string;
  connectTimeout: string;
  requestTimeout: string;
  retries: string;
}

export function addNodesOption(cmd: Command): Command {
  return cmd.option(
    '--nodes <file|list>',
    'node list: a file (one node per line) or a comma list; default $TSNODE_NODES, then ./nodes.txt, then http://127.0.0.1:8112',
  );
}

export function addNetworkOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--connect-timeout <duration>', 'TCP/TLS connect timeout per request').default('3s'))
    .addOption(new Option('--request-timeout <duration>', 'longest wait for one complete answer').default('30s'))
    .addOption(new Option('--retries <n>', 'retries for connection errors, timeouts, 429 and 5xx (never for 4xx)').default('3'));
}
