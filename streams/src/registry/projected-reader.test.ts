import { describe, expect, it } from 'vitest';
import type { Schema } from 'avsc';
import { avroType, eventSchema, samples } from '@trawl/schemas';
import { projectedReader } from './projected-reader.ts';

describe('projectedReader', () => {
  it('reads exactly the kept fields of every sample event, equal to a whole decode', () => {
    const base = samples.PageFetched;
    const page = [base, { ...base, links: ['https://a/1', 'https://a/2'], next_page: 'https://a/n', content_type: 'text/html', attempt: 3 }, { ...base, links: [], render_mode: 'browser' as const }];
    const writer = avroType(eventSchema('PageFetched') as Schema);
    const keep = ['event_id', 'occurred_at', 'job_id', 'url', 'status', 'bytes', 'render_mode', 'attempt'] as const;
    const reader = projectedReader(writer, keep);
    for (const sample of page) {
      const bytes = writer.toBuffer(sample);
      const whole = writer.fromBuffer(bytes) as Record<string, unknown>;
      const projected = reader.type.fromBuffer(bytes, reader.resolver) as Record<string, unknown>;
      expect(Object.keys(projected).sort()).toEqual([...keep].sort());
      for (const f of keep) expect(projected[f]).toEqual(whole[f]);
      // The logical type survives: a timestamp is still a Date.
      expect(projected.occurred_at).toBeInstanceOf(Date);
    }
  });

  it('skips maps and arrays without reading them: the item fields and the page links', () => {
    const writer = avroType(eventSchema('ItemExtracted') as Schema);
    const reader = projectedReader(writer, ['event_id', 'item_key']);
    for (const sample of [samples.ItemExtracted, { ...samples.ItemExtracted, causation_id: 'c', url: 'https://ü/✓' }]) {
      const value = { ...sample, fields: { a: 'x'.repeat(1000), ['ü'.repeat(3)]: '✓' } };
      const projected = reader.type.fromBuffer(writer.toBuffer(value), reader.resolver) as Record<string, unknown>;
      expect(projected).toEqual({ event_id: sample.event_id, item_key: sample.item_key });
    }
  });

  it('keeps a named type used by a kept field but defined inside a dropped one', () => {
    const writer = avroType({
      type: 'record', name: 'dev.trawl.test.Outer',
      fields: [
        { name: 'first', type: { type: 'array', items: { type: 'enum', name: 'dev.trawl.test.Mode', symbols: ['a', 'b'] } } },
        { name: 'nested', type: { type: 'record', name: 'dev.trawl.test.Inner', fields: [{ name: 'm', type: 'dev.trawl.test.Mode' }] } },
        { name: 'second', type: 'dev.trawl.test.Mode' },
        { name: 'again', type: ['null', 'dev.trawl.test.Inner'] },
      ],
    } as Schema);
    const reader = projectedReader(writer, ['second', 'again', 'nested']);
    const value = { first: ['a', 'b'], nested: { m: 'b' }, second: 'b', again: { m: 'a' } };
    expect(reader.type.fromBuffer(writer.toBuffer(value), reader.resolver)).toEqual({ nested: { m: 'b' }, second: 'b', again: { m: 'a' } });
  });

  it('ignores kept names the writer lacks, and refuses what is not a record', () => {
    const writer = avroType(eventSchema('ItemExtracted') as Schema);
    const reader = projectedReader(writer, ['event_id', 'no_such_field']);
    const sample = samples.ItemExtracted;
    expect(reader.type.fromBuffer(writer.toBuffer(sample), reader.resolver)).toEqual({ event_id: sample.event_id });
    expect(() => projectedReader(avroType('string'), ['x'])).toThrow(/only records/);
  });

  it('still refuses a truncated body', () => {
    const writer = avroType(eventSchema('ItemExtracted') as Schema);
    const reader = projectedReader(writer, ['event_id']);
    const bytes = writer.toBuffer(samples.ItemExtracted);
    expect(() => reader.type.fromBuffer(bytes.subarray(0, bytes.length - 3), reader.resolver)).toThrow(/truncated/);
  });
});
