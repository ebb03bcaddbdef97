/** `tsnode nodes`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { networkFlags } from '../../network-options.js';

export function nodesFlags() {
  return { output: flag.output(), ...networkFlags() };
}
export type NodesOptions = FlagValues<ReturnType<typeof nodesFlags>>;
