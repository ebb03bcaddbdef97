/**
 * One error base: every error class of the library derives from TsnodeError (a stable code, a
 * message, a hint), src/errors.ts names them all, and the CLI's reporter maps each code to its
 * exit code and words once (cli/errors.ts exitCodeOf, cli/runtime.ts reportError).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError, exitCodeOf, UsageError } from '../../src/cli/errors.js';
import { ClusterError } from '../../src/cli/local-cluster/state.js';
import { reportError } from '../../src/cli/runtime.js';
import * as errors from '../../src/errors.js';
import { errors as publicErrors } from '../../src/index.js';
import { testContext } from '../helpers/context.js';

const SRC = join(import.meta.dirname, '../../src');
const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));

/** Error classes that never leave the function or module that throws them (caught right there). */
const PRIVATE = ['protocol/records.ts Invalid', 'cli/commands/demo/action.ts StepFailed'];
const BASE = 'tsnode-error.ts TsnodeError';

describe('the error base', () => {
  it('is the base of every error class in src/ (except the private ones that never escape)', () => {
    const direct = files(SRC).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/class (\w+) extends Error\b/g)].map((m) => `${relative(SRC, f)} ${m[1]}`));
    expect(direct.sort()).toEqual([BASE, ...PRIVATE].sort());
  });

  it('src/errors.ts names every exported error class of the library, each a TsnodeError', () => {
    const declared = files(SRC)
      .filter((f) => !relative(SRC, f).startsWith('cli/'))
      .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/export class (\w+) extends \w*Error\b/g)].map((m) => m[1]!));
    const named = Object.entries(errors).filter(([, v]) => typeof v === 'function');
    expect(named.map(([k]) => k).sort()).toEqual(declared.sort());
    for (const [name, cls] of named) expect(cls === errors.TsnodeError || (cls as { prototype: unknown }).prototype instanceof errors.TsnodeError, name).toBe(true);
    expect(publicErrors.TsnodeError).toBe(errors.TsnodeError);
  });

  it('gives each error a stable code, its message and its hint', () => {
    const e = new errors.DiscoveryError('http://n1:8112', 'no_topology', 'runs no ring', 'list the nodes with --nodes');
    expect(e).toBeInstanceOf(errors.TsnodeError);
    expect([e.code, e.message, e.hint, e.name]).toEqual(['no_topology', 'http://n1:8112: runs no ring', 'list the nodes with --nodes', 'DiscoveryError']);
    const n = new errors.NodeHttpError('http://n1:8112', 503, 'HTTP 503', {});
    expect([n.code, n instanceof errors.NodeRequestError, n instanceof errors.TsnodeError]).toEqual(['http', true, true]);
    expect(new errors.CodecError('"x" is not a span', 'x', '<n>s').hint).toBe('expected <n>s');
    expect(new errors.SourceError('a.ndjson', 'no such file').code).toBe('source');
    expect(new errors.RunInterruptedError('before the preflight').code).toBe('run_interrupted');
    // The CLI's own errors are TsnodeErrors too, and carry their exit code.
    expect(new UsageError('--x: bad')).toBeInstanceOf(errors.TsnodeError);
  });
});

describe("the CLI's one mapping", () => {
  const report = (err: unknown, verbose = false): { exit: number; stderr: string } => {
    const { ctx, err: stderr } = testContext({ verbose });
    // The non-interactive logger stamps each line: the words are what is checked here.
    return { exit: reportError(err, ctx), stderr: stderr().replace(/^\S+Z /gm, '') };
  };

  it.each([
    [
      'a discovery refusal',
      new errors.DiscoveryError('http://n1:8112', 'no_topology', 'runs no ring', 'list the nodes'),
      2,
      'error: http://n1:8112: runs no ring\n  hint: list the nodes\n',
    ],
    [
      'a header that cannot be sent',
      new errors.HeaderError('--header', 'nope', 'no colon'),
      2,
      'error: --header: no colon\n  hint: write a header as "Name: value", e.g. --header "Authorization: Bearer $TOKEN"\n',
    ],
    ['an unreadable input', new errors.SourceError('a.ndjson', 'no such file'), 2, 'error: a.ndjson: no such file\n'],
    ['a bad resume', new errors.ReplayStateError('state file s.json: changed', 'start over'), 2, 'error: state file s.json: changed\n  hint: start over\n'],
    [
      'a bad serve value',
      new errors.ConfigError('--rollups', '60,90', 'multiples of the smallest'),
      2,
      'error: --rollups: "60,90" is not valid\n  hint: expected multiples of the smallest\n',
    ],
    ['a node id of another ring', new errors.StartError('not_in_topology', 'n is not in the topology'), 2, 'error: n is not in the topology\n'],
    ['a port in use (serve)', new errors.StartError('port_in_use', 'port 8112 is in use'), 1, 'error: port 8112 is in use\n'],
    ['a store that cannot open', new errors.StoreOpenError('the data dir is locked'), 1, 'error: the data dir is locked\n'],
    [
      'a node that failed',
      new errors.NodeHttpError('http://n1:8112', 500, 'HTTP 500', { hint: 'look at the node' }),
      1,
      'error: http://n1:8112: HTTP 500\n  hint: look at the node\n',
    ],
    ['a locked target', new errors.RunLockedError('http://n1:8112', '/l', null), 2, undefined],
    ['a run interrupted before sending', new errors.RunInterruptedError('before the preflight'), 130, 'error: interrupted before the preflight: nothing was sent\n'],
    ['a value that does not parse', new errors.CodecError('"x" is not a span', 'x', '<n>s'), 2, 'error: "x" is not a span\n  hint: expected <n>s\n'],
    // The same code, two meanings: a cluster's own port is the user's to change (2); serve's is a failure (1).
    [
      'a port in use (cluster up)',
      new ClusterError('port_in_use', 'port 18100 is in use', 'pick another --base-port'),
      2,
      'error: port 18100 is in use\n  hint: pick another --base-port\n',
    ],
    ['a CLI error with its own exit', new CliError('config_write_failed', 'cannot write c.yaml', { exitCode: 1 }), 1, 'error: cannot write c.yaml\n'],
    // The run core's refusals, in the words of the command they refused (cli/errors.ts messageOf).
    [
      'a sweep whose target is locked',
      new errors.RunLockedError('http://n1:8112', '/l/x.lock', null, 'sweep'),
      2,
      'error: refusing to sweep: http://n1:8112 is the target of another destructive run: a holder whose lock file cannot be read (lock /l/x.lock); nothing was sent\n' +
        '  hint: wait for that run to end (tsnode history shows it), or remove the lock file if that process is gone\n',
    ],
    [
      'a retention run whose target is locked',
      new errors.RunLockedError('http://n1:8112', '/l', null, 'retention apply'),
      2,
      /^error: refusing to apply the retention policy: http:\/\/n1:8112 is the target/,
    ],
    ['a cancel whose target is locked (no words of its own)', new errors.RunLockedError('http://n1:8112', '/l', null, 'sweep cancel'), 2, /^error: http:\/\/n1:8112 is the target/],
    [
      'a delete whose query selects other metrics',
      new errors.DeleteSelectsOthersError('cpu', 'http://n1:8112', 2, 'cpu_total'),
      2,
      'error: refusing to delete: the query for cpu also selects 2 other metrics on http://n1:8112 (e.g. cpu_total); nothing was deleted\n' +
        '  hint: use a tag query that selects only what should go, and check it with tsnode find\n',
    ],
    ['a delete not confirmed', new errors.SweepNotConfirmedError('delete', 'nothing was deleted'), 2, 'error: delete not confirmed: nothing was deleted\n'],
    ['a sweep not confirmed', new errors.SweepNotConfirmedError(), 2, 'error: sweep not confirmed: nothing was sent\n'],
    [
      'a retention policy that cannot be used',
      new errors.RetentionError('invalid_age', '--rule nnt:60: "30x" is not an age', 'e.g. 30d'),
      2,
      'error: --rule nnt:60: "30x" is not an age (nothing was sent)\n  hint: e.g. 30d\n',
    ],
  ])('%s: exit %i', (_what, err, exit, stderr) => {
    const r = report(err);
    expect(r.exit).toBe(exit);
    expect(exitCodeOf(err)).toBe(exit);
    if (stderr instanceof RegExp) expect(r.stderr).toMatch(stderr);
    else if (stderr !== undefined) expect(r.stderr).toBe(stderr);
    else expect(r.stderr).toMatch(/^error: .*nothing was sent\n {2}hint: /);
  });

  it('shows a library failure with its code and stack under --verbose, a refusal without the stack', () => {
    const failed = report(new errors.NodeHttpError('http://n1:8112', 500, 'HTTP 500', {}), true).stderr;
    expect(failed).toMatch(/error code: http/);
    expect(failed).toMatch(/NodeHttpError: http:\/\/n1:8112: HTTP 500/);
    const refused = report(new errors.SourceError('a.ndjson', 'no such file'), true).stderr;
    expect(refused).toMatch(/error code: source/);
    expect(refused).not.toMatch(/SourceError: a\.ndjson/); // the stack's first line
  });

  it('an error of no known class is an internal error, exit 1', () => {
    expect(report(new Error('boom'))).toEqual({ exit: 1, stderr: 'error: internal error: boom\n  (run with --verbose for details, and please report it)\n' });
  });
});
