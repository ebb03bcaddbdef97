/** The flags of destructive and verifying runs that feed monitoring and receipts (declarations: commander only). */
import { flag, type Flag } from './flags.js';
import { MAX_TIMER_MS } from './values.js';

/** `--metrics-file <path>`: the run's outcome in Prometheus text format (cli/metrics-file.ts). */
export const metricsFileFlag = (): Flag<string | undefined> =>
  flag.string('--metrics-file <path>', "write the run's outcome for node_exporter's textfile collector (Prometheus text format; temp file, then rename)", {
    complete: { kind: 'files' },
  });

/** `--settle <duration>`: wait before the receipt's after-look (cli/receipts.ts). */
export const settleFlag = (): Flag<number> =>
  flag.duration('--settle <duration>', "wait this long after the last step before the receipt's second look at the inventories (node-managed deletion is asynchronous)", {
    default: '0s',
    min: 0,
    max: MAX_TIMER_MS,
  });
