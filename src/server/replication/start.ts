/**
 * Whether and how a node replicates: a node started with a topology of several nodes replicates
 * unless told not to. The journals live under `--journal-dir`, by default `<data dir>/replication`;
 * an in-memory node keeps them in a temporary directory removed at close (it keeps nothing else
 * across a restart either).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerConfig } from '../config.js';
import type { NodeIdentity } from '../identity.js';
import { Replication } from './replication.js';

export function startReplication(config: ServerConfig, identity: NodeIdentity, onNotice: (message: string) => void): { replication: Replication; close(): Promise<void> } | null {
  const ring = identity.ring;
  if (!ring || ring.topology.nodes.length < 2 || config.replicate === false) return null;
  const temporary = config.journalDir == null && config.dataDir === null ? mkdtempSync(join(tmpdir(), 'tsnode-journal-')) : null;
  const journalDir = config.journalDir ?? temporary ?? join(config.dataDir!, 'replication');
  const replication = new Replication({
    selfId: identity.id,
    ring,
    journalDir,
    batchRecords: config.replayBatchRecords ?? 20_000,
    concurrency: config.replayConcurrency ?? 4,
    maxBatchBytes: Math.min(config.maxBodyBytes, 8 * 1024 * 1024),
    gossipIntervalMs: config.gossipIntervalMs ?? 1000,
    now: config.now,
    onNotice,
  });
  let closed: Promise<void> | undefined;
  return {
    replication,
    close: () =>
      (closed ??= replication.close().then(() => {
        if (temporary) rmSync(temporary, { recursive: true, force: true });
      })),
  };
}
