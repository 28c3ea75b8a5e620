/**
 * `/docs` (Swagger UI) is served from the console's origin under a content security policy its UI
 * works with: every script and stylesheet of the page comes from `/docs/static` (none inline), the
 * policy allows exactly that and nothing from elsewhere. (That the UI renders and "Try it out"
 * answers under it was checked in headless Chromium: plugins/openapi.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../src/plugins/openapi.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

/** The policy's directives by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((d) => d.trim()).filter(Boolean).map((d) => { const [name, ...values] = d.split(/\s+/); return [name!, values]; }));
}

describe('/docs', () => {
  it('answers with a content security policy that allows its own scripts and styles, nothing inline and nothing from elsewhere', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const policy = directives(DOCS_CSP);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('connect-src')).toEqual(["'self'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(DOCS_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);

    // Every script and stylesheet the page names is a file of /docs/static, served as its type.
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    const assets = [...scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)?.[1]), ...[...res.body.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1])];
    for (const m of scripts) expect(m[2]!.trim()).toBe('');
    expect(res.body).not.toMatch(/<style\b|\sstyle=|\son\w+=/i);
    for (const src of assets) {
      expect(src).toMatch(/^\.\/static\/[\w.-]+\.(js|css)$/);
      const asset = await api.app.inject({ method: 'GET', url: `/docs/${src!.slice(2)}` });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-type']).toMatch(src!.endsWith('.js') ? /javascript/ : /^text\/css/);
      expect(asset.headers['x-content-type-options']).toBe('nosniff');
    }
    const json = await api.app.inject({ method: 'GET', url: '/docs/json' });
    expect(json.statusCode).toBe(200);
  });

  it('leaves the API answers without the UI policy, but never sniffable', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});
