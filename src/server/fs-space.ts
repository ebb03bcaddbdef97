/**
 * The file system a node's data lives on, as the store's `/state` reports it per rollup
 * (`fs: {id, totalMB, freeMB}`): the device id, its size and the room left to the node, in
 * megabytes (MiB), read from the real data dir with statfs on every call.
 */
import { statfsSync, statSync } from 'node:fs';

export interface FileSystemSpace {
  /** The device id of the file system (stat's `dev`). */
  id: number;
  totalMB: number;
  /** What an unprivileged process may still write (statfs `bavail`), not the root reserve. */
  freeMB: number;
}

const MB = 1024 * 1024;
const round = (n: number): number => Math.round(n * 1000) / 1000;

/** The data dir's file system; undefined for a node without one (`--memory`) or when it cannot be read. */
export function fileSystemSpace(dataDir: string | null): FileSystemSpace | undefined {
  if (dataDir === null) return undefined;
  try {
    const fs = statfsSync(dataDir);
    return { id: statSync(dataDir).dev, totalMB: round((fs.blocks * fs.bsize) / MB), freeMB: round((fs.bavail * fs.bsize) / MB) };
  } catch {
    return undefined;
  }
}
