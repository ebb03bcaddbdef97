/** What run() takes from the outside world: the process's own, or a test's captured streams. */
import type { CliContext } from './context.js';

export interface CliIo {
  stdout: CliContext['stdout'];
  stderr: CliContext['stderr'];
  stdin: CliContext['stdin'];
  env: NodeJS.ProcessEnv;
  cwd: string;
  now(): number;
}

/**
 * This process's streams, environment, directory and clock. stdin is a getter: Node builds
 * process.stdin (a pipe, TTY or file stream) when it is first read, ~3 ms that only the commands
 * that read it or ask whether it is a terminal should pay.
 */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
  };
}
