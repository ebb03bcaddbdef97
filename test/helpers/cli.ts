import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/tsnode.js', import.meta.url));

/**
 * The user's own profiles must never steer a test: no TSNODE_CONFIG or TSNODE_PROFILE, and a
 * config directory that does not exist (a test that wants a config passes its own env).
 */
export const NO_USER_CONFIG = {
  TSNODE_CONFIG: undefined,
  TSNODE_PROFILE: undefined,
  TSNODE_HEADERS: undefined,
  TSNODE_STATE_DIR: undefined,
  XDG_CONFIG_HOME: join(tmpdir(), 'tsnode-tests-no-config'),
} as const;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a user would (no TTY, CI unset, no colour) and collects stdout, stderr
 * and the exit code separately.
 */
export function runCli(
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    input?: string;
    cwd?: string;
    timeoutMs?: number;
    /** Another copy of the bin (test/helpers/bin-layout.ts). */ bin?: string;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', TSNODE_NODES: undefined, CI: undefined, ...NO_USER_CONFIG, ...opts.env };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], { cwd: opts.cwd, env: env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface RunningCli {
  child: ReturnType<typeof spawn>;
  /** Resolves with the first stderr text matching `re` (rejects after `timeoutMs` or when the CLI exits first). */
  waitForStderr(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the CLI exits. */
  done: Promise<CliResult>;
}

/**
 * Starts the built CLI like runCli but returns at once, so a test can act while it runs
 * (kill a node, send SIGINT) once its stderr shows a given state.
 */
export function startCli(args: string[], opts: { env?: Record<string, string | undefined>; timeoutMs?: number } = {}): RunningCli {
  const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', TSNODE_NODES: undefined, CI: undefined, ...NO_USER_CONFIG, ...opts.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const child = spawn(process.execPath, [BIN, ...args], { env: env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    for (const w of waiters) w();
  });
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const w of waiters) w();
      resolve({ code, signal, stdout, stderr });
    });
  });
  const waitForStderr = (re: RegExp, timeoutMs = 15_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = re.exec(stderr);
        if (m) {
          cleanup();
          resolve(m[0]);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          cleanup();
          reject(new Error(`CLI exited before stderr matched ${re}:\n${stderr}`));
        }
      };
      const t = setTimeout(() => {
        cleanup();
        reject(new Error(`stderr did not match ${re} within ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(t);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return { child, waitForStderr, done };
}

/** The arguments of a command line tsnode printed (a catch-up), split as a POSIX shell would its single quotes, without the leading `tsnode`. */
export function printedArgs(command: string): string[] {
  const words = command.match(/'[^']*'|\S+/g)!.map((w) => w.replace(/^'|'$/g, ''));
  if (words[0] !== 'tsnode') throw new Error(`not a tsnode command line: ${command}`);
  return words.slice(1);
}
