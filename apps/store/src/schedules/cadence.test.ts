import { describe, expect, it } from 'vitest';
import { dueSlot, firstDue, InvalidCadenceError, validateCadence } from './cadence.ts';

const t = (iso: string) => new Date(iso);

describe('cadence', () => {
  it('a one-shot schedule is due at run_at and then done', () => {
    const c = { runAt: t('2026-01-01T10:00:00Z') };
    expect(firstDue(c, t('2026-01-01T09:00:00Z'))).toEqual(t('2026-01-01T10:00:00Z'));
    expect(dueSlot(c, t('2026-01-01T10:00:00Z'), t('2026-01-01T10:00:01Z'))).toEqual({ slot: t('2026-01-01T10:00:00Z'), next: null });
  });

  it('a cron schedule is first due at the next occurrence', () => {
    expect(firstDue({ cron: '*/5 * * * *' }, t('2026-01-01T10:02:00Z'))).toEqual(t('2026-01-01T10:05:00Z'));
  });

  it('supports seconds-level cron (6 fields)', () => {
    const c = { cron: '*/3 * * * * *' };
    expect(firstDue(c, t('2026-01-01T10:00:01Z'))).toEqual(t('2026-01-01T10:00:03Z'));
    expect(dueSlot(c, t('2026-01-01T10:00:03Z'), t('2026-01-01T10:00:03.5Z'))).toEqual({
      slot: t('2026-01-01T10:00:03Z'),
      next: t('2026-01-01T10:00:06Z'),
    });
  });

  it('run_at with a cron starts then and repeats on the cron', () => {
    const c = { runAt: t('2026-01-01T10:00:30Z'), cron: '* * * * *' };
    expect(firstDue(c, t('2026-01-01T09:00:00Z'))).toEqual(t('2026-01-01T10:00:30Z'));
    expect(dueSlot(c, t('2026-01-01T10:00:30Z'), t('2026-01-01T10:00:31Z')).next).toEqual(t('2026-01-01T10:01:00Z'));
  });

  it('coalesces missed cron slots into the latest one', () => {
    const r = dueSlot({ cron: '* * * * *' }, t('2026-01-01T10:00:00Z'), t('2026-01-01T11:00:30Z'));
    expect(r).toEqual({ slot: t('2026-01-01T11:00:00Z'), next: t('2026-01-01T11:01:00Z') });
  });

  it('coalesces missed interval slots without looping', () => {
    const r = dueSlot({ intervalMs: 1000 }, t('2026-01-01T00:00:00Z'), t('2026-06-01T00:00:00.500Z'));
    expect(r).toEqual({ slot: t('2026-06-01T00:00:00Z'), next: t('2026-06-01T00:00:01Z') });
  });

  it.each([
    [{}, /needs run_at/],
    [{ cron: 'every minute' }, /5 fields/],
    [{ cron: '61 * * * *' }, /not valid/],
    [{ cron: '* * * * *', intervalMs: 5000 }, /not both/],
    [{ intervalMs: 10 }, /interval/],
    [{ runAt: new Date('nope') }, /run_at/],
  ])('refuses %j', (c, message) => {
    expect(() => validateCadence(c)).toThrow(InvalidCadenceError);
    expect(() => validateCadence(c)).toThrow(message);
  });
});
