import { describe, expect, it } from 'vitest';
import { canonicalStartUrls, dedupeKey } from './dedupe-key.ts';
import { generateSecretsKey, parseSecretsKey, SecretBox } from '../secrets/secret-box.ts';
import { credentialFingerprint, sealCredentials } from '../secrets/seal-credentials.ts';

const base = { spider: null, start_urls: ['http://a.test/x', 'http://b.test/'], depth: 1, params: { q: 'shoes', page: '1' } };

// Without request options the fingerprint is never called: any function does.
const plain = (text: string) => text;

describe('dedupe key', () => {
  it('ignores the order and duplicates of start URLs and the order of params', () => {
    expect(dedupeKey({ ...base, start_urls: ['http://b.test/', 'http://a.test/x', 'http://b.test/'], params: { page: '1', q: 'shoes' } }, plain)).toBe(dedupeKey(base, plain));
  });

  it('compares URLs as parsed: scheme and host case, default port and fragment do not matter', () => {
    expect(dedupeKey({ ...base, start_urls: ['HTTP://A.test:80/x#top', 'http://b.test'] }, plain)).toBe(dedupeKey(base, plain));
  });

  it('differs by spider, depth, params or URL path', () => {
    const key = dedupeKey(base, plain);
    expect(dedupeKey({ ...base, spider: 'books' }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, depth: 2 }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, params: { q: 'boots', page: '1' } }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, start_urls: ['http://a.test/X', 'http://b.test/'] }, plain)).not.toBe(key);
  });

  it('differs by a sitemap mode other than the default, and is unchanged by the default', () => {
    const key = dedupeKey(base, plain);
    expect(dedupeKey({ ...base, sitemap: 'include' }, plain)).toBe(key);
    expect(dedupeKey({ ...base, sitemap: 'only' }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, sitemap: 'skip' }, plain)).not.toBe(dedupeKey({ ...base, sitemap: 'only' }, plain));
  });

  it('differs by the reach options a request sets (a login, proxies, sessions, link rules), whatever their key order', () => {
    const key = dedupeKey(base, plain);
    const login = { kind: 'form' as const, url: 'http://a.test/login', form_selector: null, fields: { user: 'ada', pw: 'x' }, actions: [], success_selector: '.me', success_url_pattern: null, failure_text: null };
    expect(dedupeKey({ ...base, sessions: 2, login }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, proxies: [{ url: 'http://p.test:3128', username: null, password: null }] }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, follow_nofollow: true }, plain)).not.toBe(key);
    expect(dedupeKey({ ...base, scope: 'any' }, plain)).not.toBe(dedupeKey({ ...base, scope: 'same_domain' }, plain));
    const reordered = { ...login, fields: { pw: 'x', user: 'ada' } };
    expect(dedupeKey({ ...base, login: reordered, sessions: 2 }, plain)).toBe(dedupeKey({ ...base, sessions: 2, login }, plain));
  });

  it('counts request options by a keyed fingerprint of their clear values: stable although sealing is not, and no bare hash of a cookie', async () => {
    const box = new SecretBox(parseSecretsKey(generateSecretsKey(), 'K'));
    const f = credentialFingerprint(box);
    const request = { ...base, headers: { authorization: 'Bearer t0ken' }, cookies: { 'a.test': ['sid=s3cret'] } };
    const one = await sealCredentials(request, { box });
    const two = await sealCredentials(request, { box });
    expect(one.sealed.cookies).not.toEqual(two.sealed.cookies);
    expect(dedupeKey(one.clear, f)).toBe(dedupeKey(two.clear, f));
    expect(dedupeKey(one.clear, f)).not.toBe(dedupeKey(base, f));
    expect(dedupeKey({ ...one.clear, cookies: { 'a.test': ['sid=other'] } }, f)).not.toBe(dedupeKey(one.clear, f));
    // Another key, another fingerprint: what is stored cannot be recomputed without the key.
    expect(dedupeKey(one.clear, credentialFingerprint(new SecretBox(parseSecretsKey(generateSecretsKey(), 'K'))))).not.toBe(dedupeKey(one.clear, f));
  });

  it('sorts canonical start URLs', () => {
    expect(canonicalStartUrls(['http://b.test', 'http://a.test/'])).toEqual(['http://a.test/', 'http://b.test/']);
  });
});
