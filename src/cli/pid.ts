/**
 * Whether a pid names a running process, as signal 0 tells it: `ours` (it runs and this user
 * may signal it), `other` (EPERM: it runs, as another user), `gone` (ESRCH, or no such pid).
 * One reading of EPERM for every caller: a lock held by another user's live process is held;
 * a local node run by another user is not one this user started.
 */
export function pidState(pid: number): 'ours' | 'other' | 'gone' {
  try {
    process.kill(pid, 0);
    return 'ours';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'other' : 'gone';
  }
}
