/**
 * A field's transforms, applied in order to the value read from the page before the item is
 * validated (item-schema.ts): `trim`, `number` (a JSON number: `$1,299.00` → 1299), `date` (ISO
 * 8601 in UTC: `March 2, 2026` → `2026-03-02T00:00:00.000Z`), `absolute_url` (against the page's
 * base URL) and `regex` (an RE2 pattern: its first capture group, or the whole match without one).
 *
 * A transform that cannot apply (no number in `n/a`, no date, no match) leaves the value as it was
 * and says why: the item is kept, with the error (extract-items.ts), never dropped.
 *
 * Patterns run in RE2 (user-patterns.ts), in time linear in the value, which is itself bounded
 * (MAX_FIELD_CHARS); numbers and dates read at most the value's first MAX_PARSED_CHARS characters.
 */
import type { RE2JS } from 're2js';
import type { FieldTransform } from '@trawl/schemas';
import { compilePattern, patternProblem } from '../rules/user-patterns.ts';

/** A value after its transforms: a JSON number after `number`, else text. */
export type FieldValue = string | number;

/** Transforms one field may declare. */
export const MAX_TRANSFORMS = 8;
/** Characters of a value that `number` and `date` read. */
const MAX_PARSED_CHARS = 200;

/** A number as written by people: a sign, digits grouped by commas, spaces or apostrophes, a decimal point, an exponent. */
const NUMBER = /[-+]?\d[\d,'\u00a0\u202f ]*(?:\.\d+)?(?:[eE][-+]?\d+)?/;

/** Why a field's transform list cannot be used (the API's INVALID_TRANSFORM), or null. */
export function transformsProblem(transforms: readonly FieldTransform[]): string | null {
  if (transforms.length > MAX_TRANSFORMS) return `has ${transforms.length} transforms; at most ${MAX_TRANSFORMS} are allowed`;
  for (const [i, t] of transforms.entries()) {
    if (t.type === 'regex') {
      if (t.pattern === null || t.pattern === '') return `transforms.${i}: regex needs a pattern`;
      const problem = patternProblem(t.pattern);
      if (problem) return `transforms.${i}: the pattern ${JSON.stringify(t.pattern)} ${problem.message}`;
      continue;
    }
    if (t.pattern !== null) return `transforms.${i}: ${t.type} takes no pattern`;
  }
  return null;
}

/** Compiled patterns, by pattern: a spec's are few, and a page asks for them once per item. */
const patterns = new Map<string, RE2JS>();

function compiled(pattern: string): RE2JS {
  let re = patterns.get(pattern);
  if (!re) {
    if (patterns.size >= 1_000) patterns.clear();
    re = compilePattern(pattern);
    patterns.set(pattern, re);
  }
  return re;
}

/** The value after `transforms`, and the first transform's refusal (the value is then the last one that applied). */
export function applyTransforms(value: string, transforms: readonly FieldTransform[], base: URL): { value: FieldValue; error: string | null } {
  let v: FieldValue = value;
  for (const t of transforms) {
    const next = applyOne(String(v), t, base);
    if (typeof next === 'object') return { value: v, error: `${t.type}: ${next.error}` };
    v = next;
  }
  return { value: v, error: null };
}

function applyOne(value: string, t: FieldTransform, base: URL): FieldValue | { error: string } {
  switch (t.type) {
    case 'trim':
      return value.trim();
    case 'number':
      return toNumber(value);
    case 'date':
      return toDate(value);
    case 'absolute_url':
      try {
        return new URL(value.trim(), base).href;
      } catch {
        return { error: `${quote(value)} is not a URL` };
      }
    case 'regex': {
      const m = compiled(t.pattern ?? '').matcher(value);
      if (!m.find()) return { error: `${quote(value)} does not match ${t.pattern}` };
      return (m.groupCount() > 0 ? m.group(1) : m.group(0)) ?? '';
    }
    default:
      return { error: `${String(t.type)} is not a transform` };
  }
}

function toNumber(value: string): number | { error: string } {
  const found = NUMBER.exec(value.slice(0, MAX_PARSED_CHARS));
  const n = found ? Number(found[0].replace(/[,'\u00a0\u202f ]/g, '')) : Number.NaN;
  return Number.isFinite(n) ? n : { error: `${quote(value)} is not a number` };
}

function toDate(value: string): string | { error: string } {
  const text = value.trim().slice(0, MAX_PARSED_CHARS);
  // A bare date reads as UTC midnight (as Date.parse reads ISO dates), not the worker's local time.
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(/[zZ]|[+-]\d\d:?\d\d$|\bGMT\b|\bUTC\b|T\d/.test(text) ? text : `${text} UTC`);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : { error: `${quote(value)} is not a date` };
}

function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}
