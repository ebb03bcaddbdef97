import { describe, expect, it } from 'vitest';
import { isLoopback, parseServeFlags, parseSize } from '../../src/server/config.js';
import { ConfigError } from '../../src/server/errors.js';

describe('tsnode serve flags', () => {
  it('has the documented defaults', () => {
    const c = parseServeFlags({}, '/srv');
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8112,
      dataDir: '/srv/tsnode-data',
      rollups: [60, 300, 1800, 10800, 86400],
      histogramRollups: [60, 300, 1800, 10800, 86400],
      sweepPaceMs: 0,
      maxBodyBytes: 64 * 1024 * 1024,
      maxBuckets: 1_000_000,
      lenientTimestamps: false,
    });
  });

  it('parses every flag', () => {
    const c = parseServeFlags(
      { host: '::1', port: '0', memory: true, rollups: '300, 60', histogramRollups: '10,60', sweepPace: '25', maxBody: '512KiB', maxBuckets: '10', lenientTimestamps: true },
      '/srv',
    );
    expect(c).toMatchObject({
      host: '::1',
      port: 0,
      dataDir: null,
      rollups: [60, 300],
      histogramRollups: [10, 60],
      sweepPaceMs: 25,
      maxBodyBytes: 524288,
      maxBuckets: 10,
      lenientTimestamps: true,
    });
  });

  it.each([
    ['64MiB', 67108864],
    ['64mib', 67108864],
    ['1048576', 1048576],
    ['10MB', 10_000_000],
    ['1k', 1024],
    ['2 GiB', 2 * 1024 ** 3],
  ])('reads --max-body %s', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it.each([
    [{ port: '70000' }, '--port'],
    [{ port: 'abc' }, '--port'],
    [{ port: '-1' }, '--port'],
    [{ rollups: '60,,300' }, '--rollups'],
    [{ rollups: '60,90' }, '--rollups'],
    [{ rollups: '0' }, '--rollups'],
    [{ histogramRollups: 'x' }, '--histogram-rollups'],
    [{ sweepPace: '-5' }, '--sweep-pace'],
    [{ sweepPace: '1.5' }, '--sweep-pace'],
    [{ maxBody: '64 parsecs' }, '--max-body'],
    [{ maxBody: '0' }, '--max-body'],
    [{ host: 'not a host!' }, '--host'],
    [{ memory: true, dataDir: '/tmp/x' }, '--memory'],
    [{ maxBuckets: '0' }, '--max-buckets'],
  ])('rejects %j naming %s', (flags, field) => {
    let err: unknown;
    try {
      parseServeFlags(flags, '/srv');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).field).toBe(field);
    expect((err as ConfigError).message).toContain(field);
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(isLoopback(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.1.4', 'example.com']) expect(isLoopback(h)).toBe(false);
  });
});
