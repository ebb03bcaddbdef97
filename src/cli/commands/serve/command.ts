import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { serveFlags, type ServeOptions } from './options.js';

/** `tsnode serve`: declaration only; the server is loaded when the command runs. */
export function serveCommand(program: Command, runner: Runner): void {
  addFlags(program.command('serve').description('run a local reference node (SQLite) that speaks the node HTTP API'), serveFlags())
    .addHelpText(
      'after',
      `
The node prints one line on stdout when it is ready:
  tsnode node listening on http://HOST:PORT (data: DIR, node id UUID)
With --topology it answers the ring endpoints (/state, /stats.json, /capa.json, /gossip/json,
/topology/json|xml/<hash>, /toporing/json/<hash>, /locate/json|xml/<uuid>/<metric>); its identity
must be one of the topology's nodes.
SIGINT/SIGTERM stop it cleanly (in-flight requests finish, the database is closed; exit 0).
A port already in use, or a data dir in use or damaged, exits 1; a bad flag exits 2.
A full disk: writes are refused (507 disk_full), reads and sweeps go on.

Examples:
  $ tsnode serve                                     127.0.0.1:8112, data in ./tsnode-data
  $ tsnode serve --port 0 --memory                   a throwaway node on a free port
  $ tsnode serve --rollups 60,300 --sweep-pace 50    slow sweeps down to watch their status
  $ tsnode serve --lenient-timestamps                for clients such as gosnowth (integer start_ts/end_ts)
  $ tsnode serve --node-id 1f846f26-0cfd-4df5-b4f1-e0930604e577 --topology ring.json`,
    )
    .action((opts: ServeOptions) => runner(() => import('./action.js').then((m) => m.serveAction), opts));
}
