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

/**
 * Options of the program itself. commander reads them anywhere on the command line (before or
 * after the command), so no command may declare an option of the same name.
 */
export const GLOBAL_FLAGS = ['--no-color', '-v', '--verbose', '-q', '--quiet', '--no-progress', '--profile', '--state-dir', '-V', '--version', '-h', '--help'] as const;
