import { createServer, connect, type Server, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';

// The proxy itself: an upstream that answers every chunk with a fixed 20-byte reply.
const REPLY = Buffer.from('0123456789abcdefghij');
let upstream: Server;
let target: string;

beforeAll(async () => {
  upstream = createServer((s) => {
    s.on('error', () => {});
    s.on('data', () => s.write(REPLY));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  target = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

/** Sends "x", collects what comes back until close, error or `waitMs` of silence. */
function exchange(proxy: FaultProxy, waitMs = 300): Promise<{ data: Buffer; how: 'close' | 'error' | 'silence'; arrivals: number[] }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const arrivals: number[] = [];
    const s = connect(proxy.port, '127.0.0.1', () => s.write('x'));
    let timer = setTimeout(() => done('silence'), waitMs);
    const done = (how: 'close' | 'error' | 'silence'): void => {
      clearTimeout(timer);
      s.destroy();
      resolve({ data: Buffer.concat(chunks), how, arrivals });
    };
    s.on('data', (c: Buffer) => {
      chunks.push(c);
      arrivals.push(Date.now());
      clearTimeout(timer);
      if (Buffer.concat(chunks).length >= REPLY.length) {
        done('close');
        return;
      }
      timer = setTimeout(() => done('silence'), waitMs);
    });
    s.on('error', () => done('error'));
    s.on('close', () => done('close'));
  });
}

describe('fault proxy', () => {
  it('passes bytes both ways and counts connections', async () => {
    const proxy = await startFaultProxy(target);
    const r = await exchange(proxy);
    expect(r.data.toString()).toBe(REPLY.toString());
    expect(proxy.connections).toBe(1);
    await proxy.close();
  });

  it('resets on connect, and after N bytes of the response', async () => {
    const proxy = await startFaultProxy(target, { kind: 'reset' });
    const r = await exchange(proxy);
    expect(r.how).toBe('error');
    expect(r.data.length).toBe(0);
    proxy.setMode({ kind: 'reset', afterBytes: 5 });
    const r2 = await exchange(proxy);
    expect(r2.data.toString()).toBe('01234');
    expect(r2.how).not.toBe('silence');
    await proxy.close();
  });

  it('half-open accepts and never answers; blackhole stops after N bytes', async () => {
    const proxy = await startFaultProxy(target, { kind: 'half-open' });
    const r = await exchange(proxy, 200);
    expect(r.how).toBe('silence');
    expect(r.data.length).toBe(0);
    proxy.setMode({ kind: 'blackhole', afterBytes: 3 });
    const r2 = await exchange(proxy, 200);
    expect(r2.how).toBe('silence');
    expect(r2.data.toString()).toBe('012');
    await proxy.close();
  });

  it('trickles one byte per interval, delays, and applies queued modes in order', async () => {
    const proxy = await startFaultProxy(target, { kind: 'trickle', intervalMs: 10 });
    const r = await exchange(proxy);
    expect(r.data.toString()).toBe(REPLY.toString());
    expect(r.arrivals.length).toBe(REPLY.length); // one byte per chunk
    expect(r.arrivals.at(-1)! - r.arrivals[0]!).toBeGreaterThanOrEqual(10 * (REPLY.length - 2));
    proxy.setMode({ kind: 'pass' });
    proxy.queue({ kind: 'reset' }, { kind: 'delay', ms: 100 });
    expect((await exchange(proxy)).how).toBe('error');
    const started = Date.now();
    const delayed = await exchange(proxy);
    expect(delayed.data.toString()).toBe(REPLY.toString());
    expect(Date.now() - started).toBeGreaterThanOrEqual(190); // 100 ms each way
    expect((await exchange(proxy)).data.toString()).toBe(REPLY.toString());
    expect(proxy.connections).toBe(4);
    await proxy.close();
  });
});
