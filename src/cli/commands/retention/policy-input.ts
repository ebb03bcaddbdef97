/**
 * The policy as the user gave it (a file, or repeatable --rule, never both), and the errors of
 * the retention core turned into the CLI's: every RetentionError means nothing was sent (exit 2).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ClusterFacts } from '../../../client/sweep-checks.js';
import { parsePolicyFile, parseRules, type NodeSpans, type Policy } from '../../../retention/index.js';
import { UsageError } from '../../errors.js';

/** A policy file is a few lines; a larger file is not one (and is not read into memory). */
const MAX_POLICY_BYTES = 1024 * 1024;

/** Reads the policy from `file` or `rules` (exactly one of them); errors name the file, line, key. */
export function readPolicy(file: string | undefined, rules: readonly string[], cwd: string): Policy {
  if (file !== undefined && rules.length > 0) {
    throw new UsageError(`a policy file (${file}) and --rule cannot be combined`, 'put every rule in the file, or give them all with --rule', undefined, 'conflicting_options');
  }
  if (file === undefined && rules.length === 0) {
    throw new UsageError(
      'no policy: give a policy file or --rule',
      'e.g. tsnode retention plan retention.yaml, or --rule nnt:60=30d --rule text=90d',
      undefined,
      'missing_argument',
    );
  }
  return file !== undefined ? parsePolicyFile(readSmall(file, cwd), file) : parseRules(rules);
}

function readSmall(file: string, cwd: string): string {
  let fd: number;
  try {
    fd = openSync(resolve(cwd, file), 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new UsageError(`policy ${file}: cannot read it: ${why}`, 'a YAML (.yaml, .yml) or JSON (.json) policy file, or --rule');
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UsageError(`policy ${file}: is a directory`, 'a YAML (.yaml, .yml) or JSON (.json) policy file');
    const buf = Buffer.alloc(MAX_POLICY_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > MAX_POLICY_BYTES) throw new UsageError(`policy ${file}: larger than 1MiB: not a policy file`, 'a policy is a few lines: nnt: {60: 30d}, text: 90d');
    }
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** What each node said about its spans (GET /state), for planRetention. A node that did not say is left to the profile's spans. */
export function nodeSpansOf(nodes: readonly string[], facts: ClusterFacts): NodeSpans[] {
  return nodes.map((node) => {
    const self = facts.nodes.find((n) => n.url === node)?.self;
    return {
      node,
      ...(self?.nntRollups ? { nnt: self.nntRollups } : {}),
      ...(self?.histogramRollups ? { histogram: self.histogramRollups } : {}),
    };
  });
}
