import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

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
