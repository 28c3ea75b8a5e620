/**
 * Schema evolution rules. Trawl's subjects are BACKWARD compatible: a consumer on the new schema
 * reads everything written with the last released one, so consumers upgrade first and the event
 * log stays readable forever. Released versions are frozen under `schemas/released/<Name>/vN.avsc`
 * with a golden fixture each under `schemas/fixtures/`.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Schema } from 'avsc';
import { avroType } from './avro-type.ts';
import { AVRO_DIR, eventSchema } from './load.ts';
import { EVENT_NAMES, type EventName } from './names.ts';
import { samples } from './samples.ts';

export const RELEASED_DIR = join(AVRO_DIR, '..', 'released');
export const FIXTURES_DIR = join(AVRO_DIR, '..', 'fixtures');

export interface ReleasedVersion {
  readonly name: EventName;
  readonly version: number;
  readonly schema: Schema;
}

export function releasedVersions(name: EventName, dir: string = RELEASED_DIR): ReleasedVersion[] {
  const sub = join(dir, name);
  if (!existsSync(sub)) return [];
  return readdirSync(sub)
    .map((f) => /^v(\d+)\.avsc$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name, version: Number(m[1]), schema: JSON.parse(readFileSync(join(sub, m[0]), 'utf8')) as Schema }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Why `reader` cannot read data written with `writer`, or [] when it can (Avro schema resolution:
 * added fields need defaults, types may only be promoted, enum symbols may not disappear unless
 * the reader has a default, …).
 */
export function backwardProblems(reader: Schema, writer: Schema): string[] {
  try {
    const r = avroType(reader);
    const w = avroType(writer);
    r.createResolver(w);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

/** The schema without docs: what decides compatibility and equality (defaults included). */
export function canonical(schema: Schema): string {
  return JSON.stringify(avroType(schema).schema());
}

export interface CheckResult {
  readonly name: EventName;
  readonly releasedVersion: number | null;
  readonly changed: boolean;
  readonly problems: string[];
}

/** Compares each current schema with its last released version. */
export function checkSchemas(current: (name: EventName) => Schema = eventSchema, dir: string = RELEASED_DIR): CheckResult[] {
  return EVENT_NAMES.map((name) => {
    const versions = releasedVersions(name, dir);
    const last = versions.at(-1);
    const schema = current(name);
    if (!last) return { name, releasedVersion: null, changed: true, problems: [] };
    // Every released version stays readable, not just the last: the log keeps them all.
    const problems = versions.flatMap((v) => backwardProblems(schema, v.schema).map((p) => `cannot read v${v.version}: ${p}`));
    return { name, releasedVersion: last.version, changed: canonical(schema) !== canonical(last.schema), problems };
  });
}

/** Freezes every changed, compatible schema as its next version, with a golden fixture. */
export function releaseSchemas(dir: string = RELEASED_DIR, fixturesDir: string = FIXTURES_DIR): string[] {
  const released: string[] = [];
  for (const r of checkSchemas(eventSchema, dir)) {
    if (r.problems.length > 0) throw new Error(`${r.name} is not BACKWARD compatible: ${r.problems.join('; ')}`);
    if (!r.changed) continue;
    const version = (r.releasedVersion ?? 0) + 1;
    const schema = eventSchema(r.name);
    mkdirSync(join(dir, r.name), { recursive: true });
    writeFileSync(join(dir, r.name, `v${version}.avsc`), JSON.stringify(schema, null, 2) + '\n');
    const type = avroType(schema);
    const value = samples[r.name];
    mkdirSync(fixturesDir, { recursive: true });
    writeFileSync(join(fixturesDir, `${r.name}.v${version}.json`), JSON.stringify(JSON.parse(type.toString(value)), null, 2) + '\n');
    writeFileSync(join(fixturesDir, `${r.name}.v${version}.hex`), type.toBuffer(value).toString('hex') + '\n');
    released.push(`${r.name} v${version}`);
  }
  return released;
}
