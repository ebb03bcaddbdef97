import { Chalk } from 'chalk';

/** Paints for stdout and stderr, each following its own stream's colour decision. */
export function painter(enabled: boolean): InstanceType<typeof Chalk> {
  return new Chalk({ level: enabled ? 1 : 0 });
}
