import { describe, expect, it } from 'vitest';
import { makeLogger } from '../../src/cli/context.js';
import { NodeProgress } from '../../src/cli/render/node-progress.js';
import { startSpinner } from '../../src/cli/render/spinner.js';
import { testContext } from '../helpers/context.js';

/** A context on an interactive terminal, with the global -q / --no-progress as given. */
function terminal(flags: { quiet?: boolean; progress?: boolean }) {
  const t = testContext();
  const id = (s: string): string => s;
  const ctx = { ...t.ctx, interactive: true, ...flags };
  ctx.log = makeLogger({ stderr: ctx.stderr, interactive: true, verbose: false, quiet: flags.quiet === true, now: ctx.now, paint: { warn: id, error: id, dim: id } });
  return { ctx, err: t.err };
}

function feed(p: NodeProgress): void {
  p.onEvent({ kind: 'state', node: 'http://a:1', state: 'running', at: 1 });
  p.onEvent({ kind: 'state', node: 'http://a:1', state: 'done', at: 2 });
  p.stop();
}

describe('progress honours -q and --no-progress', () => {
  it('on a terminal, the live lines are drawn in place (escape codes) by default', () => {
    const { ctx, err } = terminal({});
    feed(new NodeProgress(ctx, ['http://a:1']));
    expect(err()).toContain('\u001b[?25l');
  });

  it('--no-progress: no live lines, one plain line per change instead', () => {
    const { ctx, err } = terminal({ progress: false });
    feed(new NodeProgress(ctx, ['http://a:1']));
    expect(err()).not.toContain('\u001b');
    expect(err()).toBe('http://a:1: running\nhttp://a:1: done after 0.0s\n');
  });

  it('-q: nothing at all', () => {
    const { ctx, err } = terminal({ quiet: true, progress: false });
    feed(new NodeProgress(ctx, ['http://a:1']));
    expect(err()).toBe('');
  });

  it('a spinner only where progress is shown', async () => {
    expect(await startSpinner(terminal({ quiet: true, progress: false }).ctx, 'x')).toBeUndefined();
    expect(await startSpinner(terminal({ progress: false }).ctx, 'x')).toBeUndefined();
    expect(await startSpinner(testContext().ctx, 'x')).toBeUndefined(); // not a terminal
    const { ctx } = terminal({});
    const spinner = await startSpinner(ctx, 'x');
    expect(spinner).toBeDefined();
    spinner!.stop();
  });
});
