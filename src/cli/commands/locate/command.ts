import { InvalidArgumentError, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { locateFlags, type LocateOptions } from './options.js';

/** `tsnode locate <uuid> <metric>`: declaration only; the work is in action.ts. */
export function declareLocate(program: Command, runner: Runner): void {
  const cmd = program
    .command('locate')
    .description("the nodes that own a metric on the ring, primary first (computed from the topology, checked against the node's /locate/json)")
    // Checked as the command line is read, so a bad argument sends nothing, not even a --seed lookup.
    .argument('<uuid>', 'the check UUID the metric belongs to', (v: string) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v))
        throw new InvalidArgumentError(`${JSON.stringify(v)} is not a UUID (e.g. 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f)`);
      return v;
    })
    .argument('<metric>', 'the metric name, as written', (v: string) => {
      if (v === '') throw new InvalidArgumentError('the metric name is empty');
      return v;
    });
  addFlags(cmd, locateFlags());
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode locate 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --profile prod
  $ tsnode locate 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --seed http://127.0.0.1:8112
  $ tsnode locate 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f 'cpu|ST[host:a]' --nodes nodes.txt -o json

Exit: 0 the owners are known (the node agrees, or has no /locate/json and the topology hash checks
out), 1 the node places the metric elsewhere or the result cannot be confirmed, 2 usage error or
no ring (no listed node runs a topology), 130 Ctrl-C.`,
  );
  cmd.action((uuid: string, metric: string, opts: LocateOptions) => runner(() => import('./action.js').then((m) => m.locateAction), { ...opts, uuid, metric }));
}
