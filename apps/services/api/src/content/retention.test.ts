import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { checkRetention, contentExpiresAt, retentionSeconds } from './retention.ts';

const config = { defaultSeconds: 30 * 86_400, maxSeconds: 365 * 86_400 };

describe('content retention', () => {
  it('given a job that names its retention, keeps its content that long', () => {
    expect(retentionSeconds(3_600, config)).toBe(3_600);
  });

  it('given none, keeps it for the server default', () => {
    expect(retentionSeconds(null, config)).toBe(30 * 86_400);
    expect(retentionSeconds(undefined, config)).toBe(30 * 86_400);
  });

  it('never keeps it past the maximum, also for a job that asked more before the maximum was lowered', () => {
    expect(retentionSeconds(400 * 86_400, config)).toBe(365 * 86_400);
  });

  it('counts from the end of the job; a running job does not expire', () => {
    expect(contentExpiresAt(new Date('2030-01-01T00:00:00Z'), 90)).toEqual(new Date('2030-01-01T00:01:30Z'));
    expect(contentExpiresAt(null, 90)).toBeNull();
  });

  it('refuses a request asking more than the maximum, naming the limit; accepts the maximum itself', () => {
    expect(() => checkRetention(365 * 86_400, config.maxSeconds)).not.toThrow();
    expect(() => checkRetention(undefined, config.maxSeconds)).not.toThrow();
    try {
      checkRetention(365 * 86_400 + 1, config.maxSeconds);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).toBody()).toMatchObject({ error: { code: 'RETENTION_TOO_LONG', field: 'content_retention', limit: { name: 'content_retention_max_seconds', value: 365 * 86_400 } } });
    }
  });
});
