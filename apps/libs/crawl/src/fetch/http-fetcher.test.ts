import { createServer } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BodyTooLargeError,
  FetchAbortedError,
  InvalidUrlError,
  NetworkError,
  RedirectLoopError,
  TooManyRedirectsError,
  UnsafeAddressError,
} from '../errors.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { SafeResolver } from '../safety/safe-resolver.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { HttpFetcher } from './http-fetcher.ts';
import { statusError } from './status-error.ts';

const html = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;
const local = new AddressPolicy(parseAllowList('127.0.0.1/32'));

let server: LocalServer;
let fetcher: HttpFetcher;
const hang: (() => void)[] = [];

beforeAll(async () => {
  server = await startLocalServer({
    '/page': (_q, r) => r.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html('<a href="/x">héllo</a>')),
    '/gzip': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(zlib.gzipSync(html('gzipped'))),
    '/br': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' }).end(zlib.brotliCompressSync(html('brotli'))),
    '/deflate': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }).end(zlib.deflateSync(html('zlib deflate'))),
    '/deflate-raw': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }).end(zlib.deflateRawSync(html('raw deflate'))),
    '/bomb': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20))),
    '/latin1-meta': (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"></head><body>caf'), Buffer.from([0xe9]), Buffer.from('</body></html>')])),
    '/sjis-header': (_q, r) => r.writeHead(200, { 'content-type': 'text/html; charset=Shift_JIS' }).end(Buffer.from([0x3c, 0x70, 0x3e, 0x93, 0xfa, 0x96, 0x7b])),
    '/http-equiv': (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.concat([Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>na'), Buffer.from([0xef]), Buffer.from('ve')])),
    '/utf16-bom': (_q, r) => r.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' }).end(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>ü</p>', 'utf16le')])),
    '/no-type': (_q, r) => r.writeHead(200).end(html('sniffed')),
    '/pdf': (_q, r) => r.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024, 0x25)),
    '/big': (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-length': String(20 * 1024 * 1024) }).end(Buffer.alloc(20 * 1024 * 1024, 0x61)),
    '/big-chunked': (_q, r) => {
      r.writeHead(200, { 'content-type': 'text/html' });
      for (let i = 0; i < 20; i++) r.write(Buffer.alloc(1024 * 1024, 0x61));
      r.end();
    },
    '/r1': (_q, r) => r.writeHead(301, { location: '/r2' }).end(),
    '/r2': (_q, r) => r.writeHead(302, { location: '/r3?x=1#frag' }).end(),
    '/r3': (_q, r) => r.writeHead(307, { location: '/page' }).end(),
    '/loop-a': (_q, r) => r.writeHead(302, { location: '/loop-b' }).end(),
    '/loop-b': (_q, r) => r.writeHead(302, { location: '/loop-a' }).end(),
    '/to-metadata': (_q, r) => r.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/to-private-name': (_q, r) => r.writeHead(302, { location: 'http://intranet.test/' }).end(),
    '/to-ftp': (_q, r) => r.writeHead(302, { location: 'ftp://example.com/file' }).end(),
    '/busy': (_q, r) => r.writeHead(503, { 'retry-after': '7', 'content-type': 'text/html' }).end(html('busy')),
    '/gone': (_q, r) => r.writeHead(404, { 'content-type': 'text/html' }).end(html('nope')),
    '/hang': () => {
      /* never answers: headers timeout */
    },
    '/stall-body': (_q, r) => {
      r.writeHead(200, { 'content-type': 'text/html' });
      r.write('<html>');
      hang.push(() => r.end());
    },
    '/host': (q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(html(`host=${q.headers.host}`)),
  });
  fetcher = new HttpFetcher({ policy: local, totalTimeoutMs: 10_000 });
});

afterAll(async () => {
  hang.forEach((f) => f());
  await fetcher.close();
  await server.close();
});

const u = (path: string) => `${server.origin}${path}`;

describe('HttpFetcher against a local server', () => {
  it('fetches an HTML page and records the result', async () => {
    const r = await fetcher.fetch(u('/page'));
    expect(r).toMatchObject({ url: u('/page'), finalUrl: u('/page'), status: 200, isHtml: true, truncated: false, redirects: [], renderMode: 'http', charset: 'utf-8' });
    expect(r.body).toContain('héllo');
    expect(r.bytes).toBe(Buffer.byteLength(r.body!));
    expect(r.fetchMs).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ['/gzip', 'gzipped'],
    ['/br', 'brotli'],
    ['/deflate', 'zlib deflate'],
    ['/deflate-raw', 'raw deflate'],
  ])('decompresses %s', async (path, text) => {
    const r = await fetcher.fetch(u(path));
    expect(r.body).toContain(text);
    expect(r.wireBytes).toBeLessThan(r.bytes + 40);
  });

  it('stops a zip bomb at the decoded-size limit', async () => {
    const small = new HttpFetcher({ policy: local, maxBodyBytes: 1024 * 1024 });
    await expect(small.fetch(u('/bomb'))).rejects.toBeInstanceOf(BodyTooLargeError);
    await small.close();
  });

  it.each([
    ['/latin1-meta', 'café', 'windows-1252'],
    ['/sjis-header', '日本', 'shift_jis'],
    ['/http-equiv', 'naïve', 'windows-1252'],
    ['/utf16-bom', 'ü', 'utf-16le'],
  ])('decodes %s with the right charset', async (path, text, charset) => {
    const r = await fetcher.fetch(u(path));
    expect(r.body).toContain(text);
    expect(r.charset).toBe(charset);
  });

  it('sniffs HTML when Content-Type is missing', async () => {
    const r = await fetcher.fetch(u('/no-type'));
    expect(r.isHtml).toBe(true);
    expect(r.body).toContain('sniffed');
  });

  it('records a PDF without downloading or parsing it', async () => {
    const r = await fetcher.fetch(u('/pdf'));
    expect(r).toMatchObject({ status: 200, isHtml: false, body: null, contentType: 'application/pdf', bytes: 2 * 1024 * 1024 });
    expect(r.wireBytes).toBeLessThan(2 * 1024 * 1024);
  });

  it('refuses a 20 MB page by its Content-Length, and a chunked one while streaming', async () => {
    await expect(fetcher.fetch(u('/big'))).rejects.toMatchObject({ code: 'TRAWL_BODY_TOO_LARGE', retriable: false });
    await expect(fetcher.fetch(u('/big-chunked'))).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it('truncates instead when configured, and says so', async () => {
    const trunc = new HttpFetcher({ policy: local, maxBodyBytes: 1000, oversize: 'truncate' });
    const r = await trunc.fetch(u('/big'));
    expect(r.truncated).toBe(true);
    expect(r.body).toHaveLength(1000);
    await trunc.close();
  });

  it('follows a redirect chain and records it', async () => {
    const r = await fetcher.fetch(u('/r1'));
    expect(r.finalUrl).toBe(u('/page'));
    expect(r.redirects).toEqual([u('/r1'), u('/r2'), u('/r3?x=1')]);
    expect(r.body).toContain('héllo');
  });

  it('detects a redirect loop', async () => {
    await expect(fetcher.fetch(u('/loop-a'))).rejects.toBeInstanceOf(RedirectLoopError);
  });

  it('stops after maxRedirects hops', async () => {
    const strict = new HttpFetcher({ policy: local, maxRedirects: 2 });
    await expect(strict.fetch(u('/r1'))).rejects.toBeInstanceOf(TooManyRedirectsError);
    await strict.close();
  });

  it('checks every redirect hop: to the metadata address, to a name resolving privately, to another scheme', async () => {
    const resolver = new SafeResolver(local, {
      resolve: async (h) => (h === 'intranet.test' ? [{ address: '10.0.0.7', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]),
    });
    const f = new HttpFetcher({ resolver });
    await expect(f.fetch(u('/to-metadata'))).rejects.toBeInstanceOf(UnsafeAddressError);
    await expect(f.fetch(u('/to-private-name'))).rejects.toMatchObject({ code: 'TRAWL_UNSAFE_ADDRESS', address: '10.0.0.7' });
    await expect(f.fetch(u('/to-ftp'))).rejects.toBeInstanceOf(InvalidUrlError);
    await f.close();
  });

  it('refuses loopback without the allow-list, in every spelling of 127.0.0.1', async () => {
    const strict = new HttpFetcher({ policy: new AddressPolicy() });
    for (const url of [u('/page'), `http://2130706433:${server.port}/page`, `http://0x7f.1:${server.port}/page`, `http://017700000001:${server.port}/page`, `http://[::ffff:127.0.0.1]:${server.port}/`]) {
      await expect(strict.fetch(url), url).rejects.toBeInstanceOf(UnsafeAddressError);
    }
    // a name that resolves to loopback is refused at connect time (after DNS)
    await expect(strict.fetch(`http://localhost:${server.port}/page`)).rejects.toBeInstanceOf(UnsafeAddressError);
    expect(server.hits.filter((h) => h === '/page').length).toBeGreaterThan(0);
    await strict.close();
  });

  it('opens an allowed address on its listed port only: literals, names and redirect hops', async () => {
    const other = await startLocalServer({
      '/secret': (_q, r) => r.writeHead(200, { 'content-type': 'text/plain' }).end('secret'),
      '/back': (_q, r) => r.writeHead(302, { location: `${server.origin}/page` }).end(),
    });
    const bounce = await startLocalServer({ '/': (_q, r) => r.writeHead(302, { location: `${other.origin}/secret` }).end() });
    const policy = new AddressPolicy(parseAllowList(`127.0.0.1:${server.port},127.0.0.1:${bounce.port},named.test:${other.port}`));
    const resolver = new SafeResolver(policy, { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const f = new HttpFetcher({ resolver });
    try {
      expect((await f.fetch(u('/page'))).status).toBe(200);
      await expect(f.fetch(`${other.origin}/secret`)).rejects.toMatchObject({ code: 'TRAWL_UNSAFE_ADDRESS' });
      await expect(f.fetch(`http://[::ffff:127.0.0.1]:${other.port}/secret`)).rejects.toMatchObject({ code: 'TRAWL_UNSAFE_ADDRESS' });
      // a name resolving to 127.0.0.1 is checked for the port it connects to
      await expect(f.fetch(`http://pinned.test:${other.port}/secret`)).rejects.toMatchObject({ code: 'TRAWL_UNSAFE_ADDRESS', address: '127.0.0.1' });
      // a redirect from an allowed port to another port of the same address
      await expect(f.fetch(`${bounce.origin}/`)).rejects.toMatchObject({ code: 'TRAWL_UNSAFE_ADDRESS' });
      expect(other.hits).toEqual([]);
      // a host name listed with that port reaches it, and its redirect back to an allowed port too
      expect((await f.fetch(`http://named.test:${other.port}/secret`)).status).toBe(200);
      expect((await f.fetch(`http://named.test:${other.port}/back`)).finalUrl).toBe(u('/page'));
    } finally {
      await f.close();
      await other.close();
      await bounce.close();
    }
  });

  it('connects to the address that was checked (pinned DNS), keeping the Host header', async () => {
    const resolver = new SafeResolver(local, { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const f = new HttpFetcher({ resolver });
    const r = await f.fetch(`http://pinned.test:${server.port}/host`);
    expect(r.body).toContain(`host=pinned.test:${server.port}`);
    await f.close();
  });

  it('returns error statuses with Retry-After, and statusError classifies them', async () => {
    const busy = await fetcher.fetch(u('/busy'));
    expect(busy).toMatchObject({ status: 503, retryAfterMs: 7000, body: null });
    expect(statusError(busy)).toMatchObject({ code: 'TRAWL_HTTP_STATUS', retriable: true, status: 503, retryAfterMs: 7000 });
    const gone = await fetcher.fetch(u('/gone'));
    expect(statusError(gone)).toMatchObject({ retriable: false, status: 404 });
    expect(statusError(await fetcher.fetch(u('/page')))).toBeNull();
  });

  it('times out waiting for headers, and for a stalled body (retriable)', async () => {
    const impatient = new HttpFetcher({ policy: local, headersTimeoutMs: 300, bodyTimeoutMs: 300 });
    await expect(impatient.fetch(u('/hang'))).rejects.toMatchObject({ code: 'TRAWL_TIMEOUT', phase: 'headers', retriable: true });
    await impatient.close();
    // Headers of /stall-body come at once, but a busy machine must not turn them into a headers timeout.
    const stalled = new HttpFetcher({ policy: local, headersTimeoutMs: 10_000, bodyTimeoutMs: 300 });
    await expect(stalled.fetch(u('/stall-body'))).rejects.toMatchObject({ code: 'TRAWL_TIMEOUT', phase: 'body' });
    await stalled.close();
  });

  it('enforces the total deadline', async () => {
    const f = new HttpFetcher({ policy: local, totalTimeoutMs: 150, headersTimeoutMs: 10_000 });
    await expect(f.fetch(u('/hang'))).rejects.toMatchObject({ phase: 'total' });
    await f.close();
  });

  it('aborts on the caller signal', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const f = new HttpFetcher({ policy: local, headersTimeoutMs: 10_000 });
    await expect(f.fetch(u('/hang'), { signal: ac.signal })).rejects.toBeInstanceOf(FetchAbortedError);
    await f.close();
  });

  it('maps a refused connection to a retriable network error', async () => {
    const port = await freePort();
    const err = await fetcher.fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ retriable: true });
  });

  it('reuses keep-alive connections', async () => {
    const f = new HttpFetcher({ policy: local });
    const before = server.connections();
    for (let i = 0; i < 10; i++) await f.fetch(u('/page'));
    // undici may open a second socket while the first is still settling after its first response.
    expect(server.connections() - before).toBeLessThanOrEqual(2);
    await f.close();
  });

  it('refuses non-http schemes', async () => {
    await expect(fetcher.fetch('ftp://example.com/')).rejects.toBeInstanceOf(InvalidUrlError);
  });

  it('refuses after close', async () => {
    const f = new HttpFetcher({ policy: local });
    await f.close();
    await expect(f.fetch(u('/page'))).rejects.toMatchObject({ code: 'TRAWL_FETCHER_CLOSED' });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
