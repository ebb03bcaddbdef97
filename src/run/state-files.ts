/**
 * The modes of what tsnode creates in a state directory (journal, run files, locks): private to
 * the user (files 0600, folders 0700), unless the folder they go in lets its group write. A team
 * that shares one state directory on a host (`--state-dir`, `TSNODE_STATE_DIR`) makes it theirs
 * with `chgrp team dir && chmod 2770 dir`; what tsnode creates there is then group-shared (files
 * 0660, folders 0770, less the umask), so every member can append to the journal and read who
 * holds a lock.
 */
import { statSync } from 'node:fs';

export interface StateModes {
  file: number;
  dir: number;
}

const PRIVATE: StateModes = { file: 0o600, dir: 0o700 };
const GROUP: StateModes = { file: 0o660, dir: 0o770 };

/** The modes for a file or folder created in `dir` (private when `dir` cannot be read). */
export function stateModes(dir: string): StateModes {
  try {
    return statSync(dir).mode & 0o020 ? GROUP : PRIVATE;
  } catch {
    return PRIVATE;
  }
}
