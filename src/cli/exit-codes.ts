/** The documented exit codes (README and `tsnode --help`). Only cli/main.ts sets them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  partial: 3,
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes:
  0    everything asked for succeeded on every node
  1    the operation failed (runtime error, every node failed)
  2    usage or input error: bad flag, time, node list or records (nothing was sent)
  3    partial: some nodes or records failed or were skipped (the summary says which)
  130  interrupted (Ctrl-C); the summary says what was already sent and how to continue`;
