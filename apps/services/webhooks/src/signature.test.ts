import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeader, verifySignature } from './signature.ts';

describe('webhook signatures', () => {
  const secret = 'whsec-0123456789abcdef';
  const body = '{"id":"e1","type":"job.completed"}';
  const now = 1_764_000_000_000;

  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signatureHeader(secret, body, now);
    const t = Math.floor(now / 1000);
    expect(header).toBe(`t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`);
  });

  it('verifies its own header, and refuses another body, secret, a stale timestamp or garbage', () => {
    const header = signatureHeader(secret, body, now);
    expect(verifySignature(secret, header, body, 300, now)).toBe(true);
    expect(verifySignature(secret, header, body + ' ', 300, now)).toBe(false);
    expect(verifySignature('another-secret-0000', header, body, 300, now)).toBe(false);
    expect(verifySignature(secret, header, body, 300, now + 301_000)).toBe(false);
    expect(verifySignature(secret, undefined, body, 300, now)).toBe(false);
    expect(verifySignature(secret, 't=abc,v1=zz', body, 300, now)).toBe(false);
  });

  it('accepts a header carrying a second v1 (a secret being rotated)', () => {
    const header = signatureHeader(secret, body, now);
    const [t, v1] = header.split(',');
    expect(verifySignature(secret, `${t},v1=${'0'.repeat(64)},${v1}`, body, 300, now)).toBe(true);
  });
});
