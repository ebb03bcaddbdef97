import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { vi } from 'vitest';

/**
 * The terminal tests' one harness: a command in a real pseudo-terminal (tmux), its screen read
 * back with capture-pane, keys typed with send-keys. Each terminal is a tmux server of its own
 * (own socket, no user config), so no one's tmux is touched and closing it ends all it ran.
 */

/**
 * The tmux binary on PATH. Terminal tests need a real terminal and must not pass by being
 * skipped: without tmux this throws, so the test fails and says what to install.
 */
export function requireTmux(env: NodeJS.ProcessEnv = process.env): string {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'tmux');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error('tmux is not on PATH: the terminal tests need it (apt-get install tmux; .ci/run installs it when run as root)');
}

/**
 * A person's terminal environment: without what a CI runner or the test setup sets that would
 * change how tsnode draws (CI, NO_COLOR, FORCE_COLOR) or which nodes it acts on, plus `extra`.
 */
export function terminalEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TSNODE_NODES', 'TSNODE_PROFILE', 'TSNODE_CONFIG']) delete env[k];
  return { ...env, ...extra };
}

export interface Terminal {
  /** The visible screen now: rows joined by `\n`, as a person sees it (a wrapped line is two rows). */
  screen(): string;
  /** Everything printed since the start, scrollback included, wrapped rows joined back into lines. */
  history(): string;
  /** The pane's title (what an escape sequence could retitle). */
  title(): string;
  /** Types keys, by tmux's key names: `keys('y', 'Enter')`, `keys('C-c')`. */
  keys(...keys: string[]): void;
  /**
   * Polls `cond` (vi.waitFor) until it holds; on a timeout, fails naming `what` and showing the
   * terminal's history. `cond` may sample the screen as it goes (live lines are redrawn in place).
   */
  until(what: string, cond: () => boolean, timeoutMs?: number): Promise<void>;
  /** Ends the terminal's tmux server and everything running in it. */
  close(): void;
}

const terminals = new Set<Terminal>();
let opened = 0;

/**
 * Runs `command` with `sh -c` in a new `columns`×`rows` terminal. `env` defaults to
 * terminalEnv(); the command runs with exactly that environment (the server is started with it).
 */
export function openTerminal(command: string, opts: { columns: number; rows: number; env?: NodeJS.ProcessEnv }): Terminal {
  const bin = requireTmux();
  const socket = `tsnode-test-${process.pid}-${++opened}`;
  const tmux = (...args: string[]): string => execFileSync(bin, ['-L', socket, ...args], { encoding: 'utf8' });
  const size = ['-x', String(opts.columns), '-y', String(opts.rows)];
  execFileSync(bin, ['-L', socket, '-f', '/dev/null', 'set-option', '-g', 'history-limit', '20000', ';', 'new-session', '-d', ...size, '-s', 't', 'sh', '-c', command], {
    env: opts.env ?? terminalEnv(),
  });
  const history = (): string => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 't');
  const terminal: Terminal = {
    screen: () => tmux('capture-pane', '-p', '-t', 't'),
    history,
    title: () => tmux('display-message', '-p', '-t', 't', '#{pane_title}'),
    keys: (...keys) => void tmux('send-keys', '-t', 't', ...keys),
    until: async (what, cond, timeoutMs = 15_000) => {
      try {
        await vi.waitFor(
          () => {
            if (!cond()) throw new Error('not yet');
          },
          { timeout: timeoutMs, interval: 50 },
        );
      } catch (err) {
        const why = err instanceof Error && err.message !== 'not yet' ? ` (${err.message})` : '';
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}; the terminal shows:\n${history()}`, { cause: err });
      }
    },
    close: () => {
      terminals.delete(terminal);
      try {
        tmux('kill-server');
      } catch {
        // already gone: everything in it ended
      }
    },
  };
  terminals.add(terminal);
  return terminal;
}

/** Closes every terminal this file opened (for afterAll). */
export function closeTerminals(): void {
  for (const t of [...terminals]) t.close();
}
