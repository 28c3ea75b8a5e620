import { describe, expect, it } from 'vitest';
import { BlockClassifier, type BlockInput } from './block-classifier.ts';
import { InvalidSpecError } from '../errors.ts';

const page = (body: string, over: Partial<BlockInput> = {}): BlockInput => ({ jobId: 'j', host: 'shop.test', status: 200, body, isHtml: true, bytes: Buffer.byteLength(body), ...over });
const article = (n: number) => `<!doctype html><html><head><title>Article ${n}</title></head><body>${'<p>Lorem ipsum dolor sit amet. </p>'.repeat(200)}</body></html>`;

describe('BlockClassifier', () => {
  const c = () => new BlockClassifier();

  it('takes a 403/429/503 with a challenge vendor’s markers for a challenge', () => {
    const cases: [number, string][] = [
      [403, '<html><head><title>Just a moment...</title></head><body><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script></body></html>'],
      [503, '<html><title>Attention Required! | Cloudflare</title><body>Sorry, you have been blocked</body></html>'],
      [403, '<html><head><title>Access Denied</title></head><body>You don\'t have permission to access. Reference #18.2c3d4e5f</body></html>'],
      [403, '<html><body><script src="https://ct.captcha-delivery.com/c.js"></script></body></html>'],
      [429, '<html><body><div id="px-captcha"></div></body></html>'],
      [403, '<html><body>Request unsuccessful. Incapsula incident ID: 123</body></html>'],
      [429, '<html><body><h1>Please verify you are human</h1></body></html>'],
    ];
    for (const [status, body] of cases) expect(c().classify(page(body, { status }))?.rule, body).toBe('challenge');
  });

  it('takes a redirect to a login form for a login wall, and keeps it out of the size history', () => {
    const form = '<html><title>Sign in</title><form method="post"><input type="password" name="p"></form></html>';
    const classifier = c();
    const verdict = classifier.classify(page(form, { url: 'https://shop.test/members/', finalUrl: 'https://shop.test/login?next=%2Fmembers%2F' }));
    expect(verdict).toEqual({ rule: 'login_wall', reason: 'https://shop.test/members/ redirected to a login form (https://shop.test/login?next=%2Fmembers%2F)', retireSession: true });
    expect(classifier.medianOf('j', 'shop.test')).toBeNull();
    // The login page the crawl asked for is a page.
    expect(classifier.classify(page(form, { url: 'https://shop.test/login', finalUrl: 'https://shop.test/login' }))).toBeNull();
  });

  it('takes a captcha page at 200 for a block, with retireSession', () => {
    const body = '<html><head><title>One more step</title><script src="https://js.hcaptcha.com/1/api.js" async></script></head><body><form method="post"><div class="h-captcha" data-sitekey="x"></div><p>Verify you are human to continue.</p></form></body></html>';
    expect(c().classify(page(body))).toEqual({ rule: 'captcha', reason: 'a captcha page (HTTP 200)', retireSession: true });
    const turnstile = '<html><title>Security check</title><script src="https://challenges.cloudflare.com/turnstile/v0/api.js"></script><div class="cf-turnstile"></div><p>Are you a robot?</p></html>';
    expect(c().classify(page(turnstile))?.rule).toBe('captcha');
  });

  it('matches the spec’s block_patterns (RE2)', () => {
    const body = '<html><body><div class="notice">Your access has been temporarily limited (ref 42)</div></body></html>';
    expect(c().classify(page(body, { blockPatterns: ['nothing here', 'access has been temporarily limited \\(ref \\d+\\)'] }))?.rule).toBe('pattern');
    expect(c().classify(page(body, { blockPatterns: ['nothing here'] }))).toBeNull();
  });

  it('refuses a pattern RE2 cannot run as InvalidSpecError (not retried)', () => {
    expect(() => c().classify(page('x', { blockPatterns: ['(a)\\1'] }))).toThrow(InvalidSpecError);
  });

  it('takes a body far under the host’s running median for a block, only after enough samples', () => {
    const classifier = new BlockClassifier({ smallBodySamples: 5 });
    const tiny = '<html><body>denied</body></html>';
    for (let i = 0; i < 4; i++) expect(classifier.classify(page(article(i)))).toBeNull();
    expect(classifier.classify(page(tiny)), 'four samples are not enough').toBeNull();
    // The tiny page joined the history (it was not blocked); the median is still the articles'.
    expect(classifier.classify(page(article(5)))).toBeNull();
    expect(classifier.classify(page(tiny))?.rule).toBe('small_body');
    // Per job and host: another host's history says nothing here.
    expect(classifier.classify(page(tiny, { host: 'other.test' }))).toBeNull();
    expect(classifier.classify(page(tiny, { jobId: 'k' }))).toBeNull();
  });

  it('does not apply the size rule to a site of small pages, nor to error statuses, nor when turned off', () => {
    const small = new BlockClassifier({ smallBodySamples: 3 });
    for (let i = 0; i < 5; i++) small.classify(page(`<p>${'x'.repeat(2000)}</p>`));
    expect(small.classify(page('<p>x</p>'))).toBeNull();
    const off = new BlockClassifier({ smallBodySamples: 3, smallBodyPercent: 0 });
    for (let i = 0; i < 5; i++) off.classify(page(article(i)));
    expect(off.classify(page('<p>x</p>'))).toBeNull();
    const big = new BlockClassifier({ smallBodySamples: 3 });
    for (let i = 0; i < 5; i++) big.classify(page(article(i)));
    expect(big.classify(page('<p>gone</p>', { status: 404 }))).toBeNull();
  });

  it('leaves ordinary pages alone: a contact form with reCAPTCHA, a 403 without markers, an article about captchas', () => {
    const classifier = c();
    const contact = '<html><head><title>Contact us</title><script src="https://www.google.com/recaptcha/api.js"></script></head><body><form><div class="g-recaptcha"></div><textarea></textarea></form></body></html>';
    expect(classifier.classify(page(contact))).toBeNull();
    expect(classifier.classify(page('<html><body>Forbidden</body></html>', { status: 403 }))).toBeNull();
    expect(classifier.classify(page('<html><body><p>Why sites ask you to verify you are human, and how captchas work.</p></body></html>'))).toBeNull();
    expect(classifier.classify(page(article(1)))).toBeNull();
    expect(classifier.classify({ ...page(''), body: null, isHtml: false, bytes: 1234 })).toBeNull();
  });

  it('looks only at the first scanChars of a body', () => {
    const late = `<html><body>${'<p>text</p>'.repeat(1000)}<div class="h-captcha"></div>verify you are human</body></html>`;
    expect(new BlockClassifier({ scanChars: 2048 }).classify(page(late))).toBeNull();
    expect(new BlockClassifier().classify(page(late))?.rule).toBe('captcha');
  });
});
