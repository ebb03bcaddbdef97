import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN } from './cli.js';

export interface NodeOptions {
  /** Keep data on disk in this dir (default: a fresh temp dir, removed on stop). */
  dataDir?: string;
  /** In-memory store (no disk). */
  memory?: boolean;
  sweepPaceMs?: number;
  rollups?: number[];
  histogramRollups?: number[];
  /** Extra `tsnode serve` arguments. */
  args?: string[];
  /** Fixed port (default 0: a free one). */
  port?: number;
}

export interface TestNode {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Everything the node wrote to stderr so far (what it logs before its ready line included). */
  stderr(): string;
  /** SIGTERM and wait; removes the temp data dir unless one was given. */
  stop(): Promise<void>;
  /** SIGKILL and wait; keeps the data dir (for restart tests). */
  kill(): Promise<void>;
  /** Starts a new node process on the same data dir and port. */
  restart(): Promise<TestNode>;
}

const live = new Set<TestNode>();

/** Starts a real `tsnode serve` process on 127.0.0.1 and waits for its ready line. */
export async function startNode(opts: NodeOptions = {}): Promise<TestNode> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'tsnode-test-'));
  const args = ['serve', '--host', '127.0.0.1', '--port', String(opts.port ?? 0)];
  if (opts.memory) args.push('--memory');
  else args.push('--data-dir', dataDir);
  if (opts.sweepPaceMs !== undefined) args.push('--sweep-pace', String(opts.sweepPaceMs));
  if (opts.rollups) args.push('--rollups', opts.rollups.join(','));
  if (opts.histogramRollups) args.push('--histogram-rollups', opts.histogramRollups.join(','));
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start in 15s: ${stderr}`)), 15_000);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before it was ready: ${stderr}`));
    });
  });
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  const port = Number(new URL(url).port);
  const node: TestNode = {
    url,
    port,
    dataDir,
    child,
    stderr: () => stderr,
    async stop() {
      live.delete(node);
      child.kill('SIGTERM');
      await exited;
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      live.delete(node);
      child.kill('SIGKILL');
      await exited;
    },
    restart: () => startNode({ ...opts, dataDir, port }),
  };
  live.add(node);
  return node;
}

export function startNodes(n: number, opts: NodeOptions = {}): Promise<TestNode[]> {
  return Promise.all(Array.from({ length: n }, () => startNode(opts)));
}

/** Stops every node a test file started; call from afterAll/afterEach. */
export async function stopAllNodes(): Promise<void> {
  await Promise.all([...live].map((n) => n.stop()));
}

/** An address where nothing listens: bind a free port, then release it. */
export async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
