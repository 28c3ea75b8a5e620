/**
 * The page and its bundle as the API serves them: built on the first request when there is no
 * build (a clean clone), cached for good under content-hashed names, with a CSP that allows
 * nothing from elsewhere.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleHarness, type ConsoleHarness } from './support/console-harness.ts';

let h: ConsoleHarness;
const distDir = mkdtempSync(join(tmpdir(), 'trawl-console-dist-'));

beforeAll(async () => {
  h = await consoleHarness({ distDir });
});
afterAll(async () => h?.close());

describe('the console page', () => {
  it('is built on the first request when no build exists, and served at /', async () => {
    expect(existsSync(join(distDir, 'manifest.json'))).toBe(false);
    const res = await h.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(res.body).toMatch(/<script type="module" src="\/assets\/app-[A-Z0-9]+\.js"><\/script>/);
    expect(existsSync(join(distDir, 'manifest.json'))).toBe(true);
  });

  it('serves the hashed assets for good, and nothing else', async () => {
    const page = (await h.app.inject({ method: 'GET', url: '/' })).body;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1]!;
    const style = /href="(\/assets\/[^"]+\.css)"/.exec(page)![1]!;
    const js = await h.app.inject({ method: 'GET', url: script });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // uPlot is in the bundle, not fetched from a CDN.
    expect(js.body).toContain('uplot');
    expect(js.body).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
    expect((await h.app.inject({ method: 'GET', url: style })).headers['content-type']).toBe('text/css; charset=utf-8');
    for (const bad of ['/assets/nope.js', '/assets/..%2Fmanifest.json', '/assets/%2e%2e%2fpackage.json']) {
      expect((await h.app.inject({ method: 'GET', url: bad })).statusCode, bad).toBe(404);
    }
  });
});
