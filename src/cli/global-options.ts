/** The program's own options, apart from main.ts so that what reads them (runtime.ts) need not import the program. */

export interface GlobalOptions {
  color: boolean;
  verbose: boolean;
  /** -q/--quiet: no progress or information on stderr, only results and errors. */
  quiet?: boolean;
  /** --no-progress: no spinners, bars or live tables (logs stay). */
  progress?: boolean;
  /** --profile <name>: the profile that names the target (see config/target.ts). */
  profile?: string;
  /** --state-dir <dir>: journal, run files and locks there (as TSNODE_STATE_DIR). */
  stateDir?: string;
}
