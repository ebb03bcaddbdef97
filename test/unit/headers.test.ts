import { describe, expect, it } from 'vitest';
import { buildHeaders, HeaderError, isSecretHeader, parseHeaderLine, redactHeaders, scrubSecrets, secretValues, splitHeaderList } from '../../src/client/headers.js';
import { showProxy } from '../../src/cli/network.js';
import { headersFor } from '../helpers/network.js';
import { exitCodeOf, hintOf } from '../../src/cli/errors.js';

describe('header parsing', () => {
  it.each([
    ['Authorization: Bearer abc', ['Authorization', 'Bearer abc']],
    ['X-Tenant:blue', ['X-Tenant', 'blue']],
    ['  X-Empty:   ', ['X-Empty', '']],
    ['X-Colon: a:b:c', ['X-Colon', 'a:b:c']],
    ['X-Tab: \tv\t', ['X-Tab', 'v']],
  ])('%j', (line, want) => {
    expect(parseHeaderLine(line)).toEqual(want);
  });

  it.each([
    ['novalue', /expected "Name: value" \("novalue"\), found no colon/],
    [': v', /the header name is empty/],
    ['Bad Name: v', /"Bad Name" is not a valid header name/],
    ['X(y): v', /is not a valid header name/],
    ['X: a\r\nEvil: b', /contains a line break or NUL/],
    ['X: a\nb', /contains a line break or NUL/],
    ['X: a\u0000b', /contains a line break or NUL/],
    ['X: a\u0007b', /contains a control character/],
    ['X: ☃', /non-Latin-1/],
    ['Transfer-Encoding: chunked', /managed by the HTTP layer/],
    ['connection: close', /managed by the HTTP layer/],
  ])('rejects %j', (line, msg) => {
    expect(() => parseHeaderLine(line, '--header')).toThrow(HeaderError);
    expect(() => parseHeaderLine(line, '--header')).toThrow(msg);
    try {
      parseHeaderLine(line, '--header');
    } catch (err) {
      expect((err as Error).message.startsWith('--header: ')).toBe(true);
    }
  });

  it('never echoes a value in an error, nor a long colon-less secret', () => {
    for (const line of ['X: s3cret\nmore', 'Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig']) {
      try {
        parseHeaderLine(line);
        expect.unreachable();
      } catch (err) {
        expect((err as Error).message).not.toMatch(/s3cret|eyJhbG/);
      }
    }
  });

  it('splits TSNODE_HEADERS by lines, or by ; only where a new Name: follows', () => {
    expect(splitHeaderList('A: 1\nB: 2\r\n\n# comment\nC: 3')).toEqual(['A: 1', 'B: 2', 'C: 3']);
    expect(splitHeaderList('A: 1; B: 2;C:3')).toEqual(['A: 1', 'B: 2', 'C:3']);
    expect(splitHeaderList('Cookie: a=1; b=2; X-T: v')).toEqual(['Cookie: a=1; b=2', 'X-T: v']);
    expect(splitHeaderList('')).toEqual([]);
  });

  it('merges env then flags; the later header of the same name wins, case-insensitively', () => {
    const h = buildHeaders([
      { field: 'TSNODE_HEADERS', lines: ['authorization: env', 'X-A: 1'] },
      { field: '--header', lines: ['Authorization: flag'] },
    ]);
    expect(h).toEqual({ Authorization: 'flag', 'X-A': '1' });
    expect(headersFor(['X-B: 2'], { TSNODE_HEADERS: 'X-A: 1;X-B: 1' })).toEqual({ 'X-A': '1', 'X-B': '2' });
    // A HeaderError (the library's), which the CLI's reporter maps to exit 2 with how to write one.
    const err = (() => {
      try {
        headersFor(['nope'], {});
      } catch (e) {
        return e as HeaderError;
      }
      throw new Error('expected a HeaderError');
    })();
    expect(err).toBeInstanceOf(HeaderError);
    expect([exitCodeOf(err), hintOf(err)]).toEqual([2, 'write a header as "Name: value", e.g. --header "Authorization: Bearer $TOKEN"']);
  });
});

describe('redaction', () => {
  it('redacts Authorization, Cookie, Proxy-Authorization, secret-looking names and --redact names, in any case', () => {
    const h = { AUTHORIZATION: 'a', cookie: 'c', 'Proxy-Authorization': 'p', 'X-Api-Key': 'k', 'X-Auth-Token': 't', 'X-Custom': 'x', 'X-Tenant': 'blue' };
    expect(redactHeaders(h, ['x-CUSTOM'])).toEqual({
      AUTHORIZATION: '[redacted]',
      cookie: '[redacted]',
      'Proxy-Authorization': '[redacted]',
      'X-Api-Key': '[redacted]',
      'X-Auth-Token': '[redacted]',
      'X-Custom': '[redacted]',
      'X-Tenant': 'blue',
    });
    expect(isSecretHeader('x-tenant')).toBe(false);
    expect(h.AUTHORIZATION).toBe('a'); // a copy, the input is untouched
  });

  it('scrubs secret values (and a bearer credential alone) out of text', () => {
    const secrets = secretValues({ Authorization: 'Bearer abcd1234efgh', 'X-Tenant': 'blue' });
    expect(secrets).toEqual(['Bearer abcd1234efgh', 'abcd1234efgh']);
    expect(scrubSecrets('node said: bad token abcd1234efgh (Bearer abcd1234efgh)', secrets)).toBe('node said: bad token [redacted] ([redacted])');
    expect(scrubSecrets('blue', secrets)).toBe('blue');
  });

  it('hides credentials in a proxy URL', () => {
    expect(showProxy('http://user:pw@proxy:3128')).toBe('http://[redacted]@proxy:3128');
    expect(showProxy('http://proxy:3128')).toBe('http://proxy:3128');
  });
});

describe('a node echoing a secret header in its error', () => {
  it('never gets the secret into the error message or body', async () => {
    const { httpError } = await import('../../src/client/http.js');
    const secrets = secretValues({ Authorization: 'Bearer abcd1234efgh' });
    const err = httpError('http://n:1', { status: 401, headers: {}, text: '{"error":"token abcd1234efgh rejected","code":"unauthorized","echo":"Bearer abcd1234efgh"}' }, secrets);
    expect(err.message).toBe('http://n:1: HTTP 401: token [redacted] rejected');
    expect(JSON.stringify(err.body)).not.toContain('abcd1234efgh');
    expect(err.errorCode).toBe('unauthorized');
  });
});
