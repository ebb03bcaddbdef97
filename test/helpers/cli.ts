import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/tsnode.js', import.meta.url));

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
  opts: { env?: Record<string, string | undefined>; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', TSNODE_NODES: undefined, CI: undefined, ...opts.env };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
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
