import { describe, expect, it } from 'vitest';
import { afterUnfinished, carriedForward, deliveryVerdict, FIRST_DELIVERY, rereadHistory, type DeliveryHistory } from './delivery-verdict.ts';

const MAX = 3;

/** A message's life: each crash re-reads it; what is recorded is what the verdict said to record. */
function crashLoop(max: number): { deliveries: number; verdicts: string[] } {
  let recorded: number | undefined;
  let deliveries = 1; // the first, uncounted delivery, which the process dies in
  const verdicts: string[] = [];
  for (;;) {
    const v = deliveryVerdict(rereadHistory(0, recorded), max);
    verdicts.push(v.kind === 'run' ? (v.isolated ? 'isolated' : 'run') : 'poison');
    if (v.kind === 'poison') return { deliveries, verdicts };
    recorded = v.record;
    deliveries += 1; // and the process dies again
  }
}

describe('delivery verdicts', () => {
  it('runs a first delivery without recording anything', () => {
    expect(deliveryVerdict(FIRST_DELIVERY(0), MAX)).toEqual({ kind: 'run', isolated: false, record: 1 });
  });

  it('poisons a message that kills its process after exactly max deliveries, the last counted ones isolated', () => {
    expect(crashLoop(3)).toEqual({ deliveries: 3, verdicts: ['run', 'isolated', 'poison'] });
    expect(crashLoop(2)).toEqual({ deliveries: 2, verdicts: ['run', 'poison'] });
    expect(crashLoop(5).deliveries).toBe(5);
  });

  it('assumes one earlier delivery for a re-read with nothing recorded, and trusts what is recorded', () => {
    expect(rereadHistory(0, undefined)).toEqual({ carried: 0, here: 1 });
    expect(rereadHistory(1, 2)).toEqual({ carried: 1, here: 2 });
  });

  it('makes a re-read a suspect only once it ran during an earlier death here', () => {
    const reread = (recorded: number | undefined) => deliveryVerdict(rereadHistory(0, recorded), 5);
    expect(reread(undefined)).toMatchObject({ kind: 'run', isolated: false, record: 2 });
    expect(reread(2)).toMatchObject({ kind: 'run', isolated: true, record: 3 });
  });

  it('adds what earlier tiers carried', () => {
    expect(deliveryVerdict(rereadHistory(2, undefined), MAX)).toEqual({ kind: 'poison', unfinished: 3 });
    expect(deliveryVerdict({ carried: 1, here: 1 }, MAX)).toMatchObject({ kind: 'run', isolated: false });
  });

  it('counts a budget overrun as a delivery without an outcome: retried twice, then poison', () => {
    let h: DeliveryHistory = FIRST_DELIVERY(0);
    const first = afterUnfinished(h, MAX);
    expect(first).toEqual({ kind: 'retry', unfinished: 1, history: { carried: 0, here: 1 } });
    // Forwarded to a tier: the next position starts from what the message carries.
    h = FIRST_DELIVERY(first.unfinished);
    const second = afterUnfinished(h, MAX);
    expect(second).toMatchObject({ kind: 'retry', unfinished: 2 });
    h = FIRST_DELIVERY(second.unfinished);
    expect(afterUnfinished(h, MAX)).toEqual({ kind: 'poison', unfinished: 3 });
  });

  it('carries the deliveries without an outcome, not the failure that had one, to the next tier', () => {
    expect(carriedForward(FIRST_DELIVERY(0))).toBe(0);
    expect(carriedForward(rereadHistory(1, undefined))).toBe(2);
  });
});
