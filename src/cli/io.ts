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

/** This process's streams, environment, directory and clock. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), now: () => Date.now() };
}
