import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Schema } from 'avsc';
import { avroType } from './avro-type.ts';
import { generateTypes } from './codegen.ts';
import { backwardProblems, checkSchemas, FIXTURES_DIR, releasedVersions } from './compat.ts';
import { eventSchema } from './load.ts';
import { EVENT_NAMES } from './names.ts';
import { samples } from './samples.ts';

type RecordSchema = { type: 'record'; name: string; namespace?: string; fields: { name: string; type: unknown; default?: unknown }[] };

const withFields = (schema: Schema, edit: (fields: RecordSchema['fields']) => RecordSchema['fields']): Schema => {
  const copy = structuredClone(schema) as unknown as RecordSchema;
  copy.fields = edit(copy.fields);
  return copy as unknown as Schema;
};

describe('event schemas', () => {
  it.each(EVENT_NAMES)('%s is self-contained and carries the envelope', (name) => {
    const type = avroType(eventSchema(name));
    const fields = (type.schema() as unknown as RecordSchema).fields.map((f) => f.name);
    expect(fields.slice(0, 3)).toEqual(['event_id', 'occurred_at', 'causation_id']);
    expect(type.name).toBe(`dev.trawl.events.${name}`);
  });

  it.each(EVENT_NAMES)('%s round-trips its sample with Dates intact', (name) => {
    const type = avroType(eventSchema(name));
    const decoded = type.fromBuffer(type.toBuffer(samples[name]));
    expect(decoded).toEqual(samples[name]);
    expect((decoded as { occurred_at: unknown }).occurred_at).toBeInstanceOf(Date);
  });

  it('the generated TypeScript types match the schemas', () => {
    const committed = readFileSync(new URL('./generated/events.ts', import.meta.url), 'utf8');
    expect(committed).toBe(generateTypes());
  });
});

describe('released versions and golden fixtures', () => {
  it.each(EVENT_NAMES)('%s: every released version has a golden fixture the current schema reads', (name) => {
    const versions = releasedVersions(name);
    expect(versions.length).toBeGreaterThan(0);
    const current = avroType(eventSchema(name));
    for (const v of versions) {
      const writer = avroType(v.schema);
      const bytes = Buffer.from(readFileSync(join(FIXTURES_DIR, `${name}.v${v.version}.hex`), 'utf8').trim(), 'hex');
      const json = readFileSync(join(FIXTURES_DIR, `${name}.v${v.version}.json`), 'utf8');
      // The bytes are what that version wrote; the JSON is the same value in Avro's JSON encoding.
      expect(writer.fromBuffer(bytes)).toEqual(writer.fromString(json));
      const read = current.fromBuffer(bytes, current.createResolver(writer));
      expect(current.isValid(read)).toBe(true);
    }
  });

  it('the current schemas are BACKWARD compatible with every released version', () => {
    expect(checkSchemas().flatMap((r) => r.problems)).toEqual([]);
  });
});

describe('BACKWARD compatibility rules', () => {
  const base = eventSchema('PageFetched');

  it('accepts a new field with a default', () => {
    const next = withFields(base, (f) => [...f, { name: 'language', type: ['null', 'string'], default: null }]);
    expect(backwardProblems(next, base)).toEqual([]);
  });

  it('refuses a new field without a default', () => {
    const next = withFields(base, (f) => [...f, { name: 'language', type: 'string' }]);
    expect(backwardProblems(next, base).join()).toMatch(/language/);
  });

  it('refuses a type change that is not a promotion', () => {
    const next = withFields(base, (f) => f.map((x) => (x.name === 'status' ? { ...x, type: 'string' } : x)));
    expect(backwardProblems(next, base)).not.toEqual([]);
  });

  it('accepts a promotion (int to long)', () => {
    const next = withFields(base, (f) => f.map((x) => (x.name === 'fetch_ms' ? { ...x, type: 'long' } : x)));
    expect(backwardProblems(next, base)).toEqual([]);
  });

  it('checkSchemas reports an incompatible current schema against a released one', () => {
    const broken = (name: (typeof EVENT_NAMES)[number]) =>
      name === 'PageFetched' ? withFields(base, (f) => [...f, { name: 'required_new', type: 'int' }]) : eventSchema(name);
    const result = checkSchemas(broken).find((r) => r.name === 'PageFetched')!;
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.changed).toBe(true);
  });
});
