/**
 * What `tsnode write` says on stderr while the records go out: the progress (a spinner's line, or
 * a plain line every 5 s) and the run's events (nodes failing and back, failed batches, rejects).
 * The summary at the end is render.ts's.
 */
import type { Ora } from 'ora';
import type { RejectEntry } from '../../../records/index.js';
import type { ReplayEvent, ReplayProgress } from '../../../replay/index.js';
import type { CliContext } from '../../context.js';
import { formatElapsed } from '../../render/elapsed.js';
import { thousands } from '../../render/number-format.js';
import type { WriteOptions } from './options.js';
import { describeReject, humanBytes, STRICT_SHOWN } from './render.js';
import type { WriteRoute } from './route.js';

function progressLine(p: ReplayProgress): string {
  const secs = p.elapsedMs / 1000;
  const rate = secs > 0 ? Math.round(p.read / secs) : 0;
  let where = `${thousands(p.read)} records read`;
  let eta = '';
  if (p.bytesTotal !== undefined && p.bytesTotal > 0) {
    const frac = Math.min(1, p.bytesRead / p.bytesTotal);
    where = `${(frac * 100).toFixed(1)}% (${humanBytes(p.bytesRead)} of ${humanBytes(p.bytesTotal)}), ${thousands(p.read)} records read`;
    if (frac > 0 && frac < 1) eta = `, ETA ${formatElapsed((secs / frac) * (1 - frac))}`;
  }
  return `${where}, ${thousands(p.written)} written, ${thousands(rate)} records/s${eta}, ${p.retries} retries, ${p.rejected} rejected`;
}

/** What the run says on stderr as it goes (nodes failing and back, failed batches, rejects); --strict's first invalid records are kept in `invalidShown`. */
export function eventLog(route: WriteRoute, opts: WriteOptions, ctx: CliContext, spinner: () => Ora | undefined, invalidShown: RejectEntry[]): (e: ReplayEvent) => void {
  let shownRejects = 0;
  const say = (m: string, warn = false): void => {
    spinner()?.clear();
    if (warn) ctx.log.warn(m);
    else ctx.log.info(m);
    spinner()?.render();
  };
  return (e) => {
    switch (e.type) {
      case 'node-down':
        say(
          route.to === 'owners'
            ? `${e.node} is failing (${e.error}); its records go to the rejects file (naming it) for ${Math.round((e.untilMs - ctx.now()) / 1000)}s, then it is tried again`
            : route.to === 'primary'
              ? `${e.node} is failing (${e.error}); the records it is primary for go to their next owner for ${Math.round((e.untilMs - ctx.now()) / 1000)}s, then it is tried again`
              : `${e.node} is failing (${e.error}); sending to the other nodes for ${Math.round((e.untilMs - ctx.now()) / 1000)}s`,
          true,
        );
        break;
      case 'node-up':
        say(`${e.node} is taking writes again`);
        break;
      case 'batch-failed':
        say(`batch ${e.source} records ${e.firstRecord}-${e.lastRecord} not written: ${e.error}`, true);
        break;
      case 'warning':
        say(e.message, true);
        break;
      case 'rejected':
        if (opts.strict) {
          if (invalidShown.length < STRICT_SHOWN) invalidShown.push(e.entry);
        } else if (opts.dryRun || ctx.verbose) {
          if (shownRejects < 20) say(describeReject(e.entry), true);
          shownRejects++;
        }
        break;
      case 'input':
        ctx.log.debug(
          `${e.name}: ${e.format}${e.resumedAt ? `, resuming after record ${e.resumedAt.record} (${e.seeked ? `seeked to byte ${e.resumedAt.byte}` : 'skipping records'})` : ''}`,
        );
        break;
    }
  };
}

/**
 * The progress: the spinner's text every 250 ms, or without a spinner (a pipe, --no-progress) a
 * plain line every 5 s. The spinner line is cut to one row: ora counts wrapped lines to erase, and
 * a wrapped line would leave copies of itself behind.
 */
export function progressTimer(ctx: CliContext, spinner: Ora | undefined, latest: () => ReplayProgress | undefined): NodeJS.Timeout {
  const columns = ctx.stderr.columns ?? 80;
  const fit = (line: string): string => (line.length > columns - 3 ? `${line.slice(0, Math.max(0, columns - 4))}…` : line);
  const timer = setInterval(
    () => {
      const p = latest();
      if (!p) return;
      if (spinner) spinner.text = fit(progressLine(p));
      else ctx.log.info(progressLine(p));
      if (ctx.verbose && !spinner) {
        const m = process.memoryUsage();
        ctx.log.debug(`memory: rss ${humanBytes(m.rss)}, heap ${humanBytes(m.heapUsed)} of ${humanBytes(m.heapTotal)}, buffers ${humanBytes(m.arrayBuffers)}`);
      }
    },
    spinner ? 250 : 5000,
  );
  timer.unref();
  return timer;
}
