import { describe, expect, it } from 'vitest';
import { roomAt, usedAt, WINDOW_MS } from './hourly-window.ts';
import { decideWebhook, decideWebhookRequest } from './webhook-quota-decision.ts';
import { DEFAULT_WEBHOOK_QUOTAS, webhookQuotasFromEnv } from './webhook-quota-limits.ts';

const MIN = 60_000;
const now = Date.UTC(2026, 0, 1, 12, 30, 20);
const minute = (ago: number) => Date.UTC(2026, 0, 1, 12, 30) - ago * MIN;
const limits = { webhooks: 2, webhook_tests_per_hour: 5, webhook_deliveries_per_hour: 100 };

describe('the hourly window', () => {
  it('counts the current minute and the 59 before it', () => {
    const buckets = [{ at: minute(0), n: 1 }, { at: minute(59), n: 2 }, { at: minute(60), n: 4 }, { at: minute(200), n: 8 }];
    expect(usedAt(buckets, now)).toBe(3);
  });

  it('room now while the limit is not reached', () => {
    expect(roomAt([{ at: minute(3), n: 4 }], 5, now)).toBe(now);
  });

  it('a spent limit has room when enough of the oldest minutes have left the window', () => {
    const buckets = [{ at: minute(1), n: 2 }, { at: minute(40), n: 1 }, { at: minute(10), n: 2 }];
    // 5 used of 5: the oldest (40 minutes ago) leaves 20 minutes from its minute's start + 60.
    expect(roomAt(buckets, 5, now)).toBe(minute(40) + WINDOW_MS);
    // Three at once need the 40- and the 10-minute-old buckets gone.
    expect(roomAt(buckets, 5, now, 3)).toBe(minute(10) + WINDOW_MS);
  });

  it('a limit of 0 never has room: look again in an hour', () => {
    expect(roomAt([], 0, now)).toBe(now + WINDOW_MS);
  });
});

describe('webhook quota decisions', () => {
  it('subscriptions: the next one past `webhooks` is refused, naming it', () => {
    expect(decideWebhook(limits, 1)).toEqual({ ok: true });
    const d = decideWebhook(limits, 2);
    expect(d).toMatchObject({ ok: false, limit: 'webhooks', value: 2, used: 2 });
    expect(!d.ok && d.message).toContain('quota webhooks (2)');
  });

  it('tests and re-deliveries: refused past the hourly limit, with when one is possible again', () => {
    expect(decideWebhookRequest(limits, [{ at: minute(5), n: 4 }], now)).toEqual({ ok: true });
    const d = decideWebhookRequest(limits, [{ at: minute(5), n: 4 }, { at: minute(50), n: 1 }], now);
    expect(d).toMatchObject({ ok: false, limit: 'webhook_tests_per_hour', value: 5, used: 5 });
    // Room again when the oldest call's minute (11:40) leaves the window: at 12:40, 9 min 40 s from now.
    expect(!d.ok && d.retryAfterSeconds).toBe((minute(50) + WINDOW_MS - now) / 1000);
  });

  it('defaults from TRAWL_QUOTA_WEBHOOK*', () => {
    expect(webhookQuotasFromEnv({})).toEqual(DEFAULT_WEBHOOK_QUOTAS);
    expect(webhookQuotasFromEnv({ TRAWL_QUOTA_WEBHOOKS: '3', TRAWL_QUOTA_WEBHOOK_DELIVERIES_PER_HOUR: '0' })).toEqual({ ...DEFAULT_WEBHOOK_QUOTAS, webhooks: 3, webhook_deliveries_per_hour: 0 });
    expect(() => webhookQuotasFromEnv({ TRAWL_QUOTA_WEBHOOK_TESTS_PER_HOUR: 'lots' })).toThrow(/TRAWL_QUOTA_WEBHOOK_TESTS_PER_HOUR/);
  });
});
