import { describe, expect, it } from 'vitest';
import { dueSlot, firstDue, InvalidCadenceError, InvalidTimeZoneError, shortestGapMs, validateCadence } from './cadence.ts';

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

  it('a Europe/Berlin daily 09:00 fires at local 09:00 on both sides of the spring DST change', () => {
    const c = { cron: '0 9 * * *', timeZone: 'Europe/Berlin' };
    // Clocks go from 02:00 CET to 03:00 CEST on 2026-03-29 (01:00Z).
    const first = firstDue(c, t('2026-03-27T12:00:00Z'));
    expect(first).toEqual(t('2026-03-28T08:00:00Z'));
    const spring = dueSlot(c, first, t('2026-03-28T08:00:01Z'));
    expect(spring).toEqual({ slot: t('2026-03-28T08:00:00Z'), next: t('2026-03-29T07:00:00Z') });
    expect(dueSlot(c, spring.next!, t('2026-03-29T07:00:00Z')).next).toEqual(t('2026-03-30T07:00:00Z'));
  });

  it('and on both sides of the autumn DST change', () => {
    const c = { cron: '0 9 * * *', timeZone: 'Europe/Berlin' };
    // Clocks go from 03:00 CEST back to 02:00 CET on 2026-10-25 (01:00Z).
    const first = firstDue(c, t('2026-10-23T12:00:00Z'));
    expect(first).toEqual(t('2026-10-24T07:00:00Z'));
    expect(dueSlot(c, first, t('2026-10-24T07:00:00Z')).next).toEqual(t('2026-10-25T08:00:00Z'));
    // A dispatcher down across the change still lands on local 09:00.
    expect(dueSlot(c, first, t('2026-10-26T12:00:00Z'))).toEqual({ slot: t('2026-10-26T08:00:00Z'), next: t('2026-10-27T08:00:00Z') });
  });

  it('a local time the change skips runs an hour later that day; one it repeats runs once', () => {
    const c = { cron: '30 2 * * *', timeZone: 'Europe/Berlin' };
    expect(dueSlot(c, t('2026-03-28T01:30:00Z'), t('2026-03-28T01:30:00Z')).next).toEqual(t('2026-03-29T01:30:00Z'));
    expect(dueSlot(c, t('2026-10-25T00:30:00Z'), t('2026-10-25T00:30:00Z')).next).toEqual(t('2026-10-26T01:30:00Z'));
  });

  it('reads cron in UTC without a time zone, and intervals ignore the zone', () => {
    expect(firstDue({ cron: '0 9 * * *' }, t('2026-07-01T00:00:00Z'))).toEqual(t('2026-07-01T09:00:00Z'));
    expect(firstDue({ intervalMs: 60_000, timeZone: 'Asia/Tokyo' }, t('2026-07-01T00:00:00Z'))).toEqual(t('2026-07-01T00:01:00Z'));
    expect(shortestGapMs({ cron: '0 9 * * *', timeZone: 'Europe/Berlin' }, t('2026-03-20T00:00:00Z'))).toBe(23 * 3_600_000);
  });

  it('refuses a time zone that is not an IANA name', () => {
    expect(() => validateCadence({ cron: '0 9 * * *', timeZone: 'Mars/Olympus' })).toThrow(InvalidTimeZoneError);
    expect(() => validateCadence({ cron: '0 9 * * *', timeZone: 'Europe/Berlin' })).not.toThrow();
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
