/**
 * A page whose script grows its DOM past the body limit: the rendered HTML never reaches Node.
 * In a file of its own, so the process's peak RSS is this test's (getrusage's maxRSS only rises).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyTooLargeError } from '../errors.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { BrowserFetcher } from './browser-fetcher.ts';

const MB = 1024 * 1024;
const DOM_CHARS = 64 * MB;
const LIMIT = 1 * MB;

// 64 Mi characters of text made by the page's script (not laid out: hidden), from a response of a few hundred bytes.
const GROWING_PAGE = `<!doctype html><html><body><p id="done"></p><div id="bulk" hidden></div><script>
  const chunk = 'x'.repeat(1024 * 1024);
  const bulk = document.getElementById('bulk');
  for (let i = 0; i < ${DOM_CHARS / MB}; i++) bulk.appendChild(document.createTextNode(chunk));
  document.getElementById('done').className = 'grown';
</script></body></html>`;

let server: LocalServer;
let refusing: BrowserFetcher;
let truncating: BrowserFetcher;

beforeAll(async () => {
  server = await startLocalServer({ '/grows': (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(GROWING_PAGE) });
  const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
  refusing = await BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 30_000, maxBodyBytes: LIMIT });
  truncating = await BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 30_000, maxBodyBytes: LIMIT, oversize: 'truncate' });
}, 60_000);

afterAll(async () => {
  await refusing?.close();
  await truncating?.close();
  await server?.close();
});

describe('BrowserFetcher: the rendered DOM is bounded before it reaches Node', () => {
  it('a 64 Mi-character DOM over a 1 MiB limit: refused, and Node’s peak RSS barely moves', async () => {
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    await expect(refusing.fetch(`${server.origin}/grows`, { waitForSelector: 'p.grown' })).rejects.toBeInstanceOf(BodyTooLargeError);
    const peakGrowthMb = (process.resourceUsage().maxRSS * 1024 - rssBefore) / MB;
    console.info(`rendered DOM of ${DOM_CHARS / MB} Mi characters refused in ${Math.round(performance.now() - started)} ms, Node peak RSS growth ${Math.max(0, Math.round(peakGrowthMb))} MB`);
    // The DOM brought into Node would cost at least twice its size (the protocol message, then its
    // parsed string: ≥ 128 MB); what stays under half of that is the test's noise (the browser's
    // client, the garbage of the launch before it, which getrusage's peak still holds).
    expect(peakGrowthMb).toBeLessThan(DOM_CHARS / MB);
  }, 60_000);

  it('with oversize truncate: the first bytes, cut at the limit, and marked truncated', async () => {
    const r = await truncating.fetch(`${server.origin}/grows`, { waitForSelector: 'p.grown' });
    expect(r.truncated).toBe(true);
    expect(r.bytes).toBe(LIMIT);
    expect(Buffer.byteLength(r.body!)).toBeLessThanOrEqual(LIMIT);
    expect(r.body!).toMatch(/^<!DOCTYPE html><html><head><\/head><body><p id="done" class="grown"><\/p><div id="bulk" hidden="">x{1000}/);
  }, 60_000);
});
