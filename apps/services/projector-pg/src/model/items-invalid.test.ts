import { describe, expect, it } from 'vitest';
import { samples, type EventMap } from '@trawl/schemas';
import { InMemoryReadModel } from './in-memory-model.ts';
import type { ProjectableEvent } from './projectable-event.ts';

const JOB = samples.JobDispatched.job_id;

function item(key: string, errors: string[]): ProjectableEvent {
  const value: EventMap['ItemExtracted'] = { ...samples.ItemExtracted, event_id: `00000000-0000-5000-8000-${key.padStart(12, '0')}`, job_id: JOB, item_key: key, errors };
  return { name: 'ItemExtracted', value };
}

describe('items kept with their errors', () => {
  it('stores each item with its errors and counts the invalid ones once, however often delivered', () => {
    const m = new InMemoryReadModel();
    const events = [item('1', []), item('2', ['/salary must be >= 80']), item('3', ['title: number: "x" is not a number', "must have required property 'salary'"])];
    m.apply([{ name: 'JobDispatched', value: samples.JobDispatched }, ...events]);
    m.apply([...events, events[1]!]);
    const job = m.jobs.get(JOB)!;
    expect(job).toMatchObject({ items_extracted: 3, items_invalid: 2 });
    expect([...m.items.values()].map((i) => [i.item_key, i.errors]).sort()).toEqual([['1', []], ['2', ['/salary must be >= 80']], ['3', ['title: number: "x" is not a number', "must have required property 'salary'"]]]);
  });
});
