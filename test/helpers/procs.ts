import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose command line mentions `needle` (e.g. a temp dir), read from /proc.
 * Tests use it to prove nothing was left running. Zombies (empty cmdline) do not count.
 */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(needle)) pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
  } catch {
    return false;
  }
}

/** SIGKILLs every live process whose command line mentions `needle` (test cleanup); ignores ones already gone. */
export function killMentioning(needle: string): void {
  for (const pid of processesMentioning(needle)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
}

/** The process group of `pid` (Linux /proc). */
export function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // pid (comm) state ppid pgrp ...: comm may contain spaces, so split after the last ')'.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
