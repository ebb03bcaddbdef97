/** `tsnode locate`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { networkFlags } from '../../network-options.js';

export function locateFlags() {
  return { output: flag.output(), ...networkFlags() };
}
export type LocateOptions = FlagValues<ReturnType<typeof locateFlags>>;
