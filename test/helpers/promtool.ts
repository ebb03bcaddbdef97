import { spawnSync } from 'node:child_process';

/**
 * Runs the real `promtool check metrics` on `text` (stdin). Throws when promtool is not installed:
 * a missing tool must fail the test, never skip it (`.ci/run` installs Debian's prometheus package).
 */
export function promtoolCheck(text: string): { ok: boolean; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error('promtool is not installed: install Debian\'s "prometheus" package (apt-get install prometheus), as .ci/run does');
  }
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}
