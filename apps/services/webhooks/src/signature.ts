/**
 * `X-Trawl-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, as Stripe
 * signs: the timestamp is inside the MAC, so a receiver that refuses old timestamps refuses
 * replays, and `v1=` leaves room for another scheme beside it during a change.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-trawl-signature';

export function sign(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secret: string, body: string, now: number = Date.now()): string {
  const t = Math.floor(now / 1000);
  return `t=${t},v1=${sign(secret, t, body)}`;
}

/**
 * What a receiver does: true when one `v1` of the header is the MAC of this body and its
 * timestamp is within `toleranceSeconds` of `now`. Compares in constant time.
 */
export function verifySignature(secret: string, header: string | undefined, body: string, toleranceSeconds = 300, now: number = Date.now()): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, t, body), 'hex');
  return parts.some(([k, v]) => {
    if (k !== 'v1' || !v || !/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}
