/**
 * A website's item schema: a JSON Schema (draft 2020-12's vocabulary as Ajv runs it) each item is
 * validated against after its fields' transforms. An item that fails is kept with its errors
 * (ItemExtracted.errors), never dropped: the schema says what the user expects, and a page that
 * breaks it is what they need to see.
 *
 * A schema is user input run by every worker, and is bounded like selectors and patterns:
 *
 * - its text is at most MAX_SCHEMA_BYTES and nests at most MAX_SCHEMA_DEPTH deep, so compiling it
 *   (Ajv generates a function of about the schema's size) is quick;
 * - `pattern` and `patternProperties` run in RE2 (user-patterns.ts), linear in the value, not in
 *   V8's backtracking engine: `{"pattern": "^(a+)+$"}` would otherwise hang on 40 `a`s and a `!`;
 * - no remote `$ref` (nothing is fetched), no `$data`, unknown keywords refused (`strictSchema`), and
 *   the errors of one item capped at MAX_ITEM_ERRORS, each at MAX_ERROR_CHARS.
 *
 * Each schema text is compiled once per thread and kept (the worker's parse threads see a spec's
 * schema on every page of its job).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { compilePattern } from '../rules/user-patterns.ts';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the callable may sit one level down.
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

/** Bytes of a schema's JSON text. */
export const MAX_SCHEMA_BYTES = 16 * 1024;
/** Objects and arrays inside one another in a schema. */
export const MAX_SCHEMA_DEPTH = 16;
/** Errors kept per item. */
export const MAX_ITEM_ERRORS = 10;
/** Characters of one error. */
export const MAX_ERROR_CHARS = 300;

/** An item's errors against its schema; empty when it is valid. */
export type ItemValidator = (item: Readonly<Record<string, unknown>>) => string[];

/** `pattern` keywords run in RE2 (linear time); a pattern RE2 refuses fails the schema's compilation. */
function re2Engine(pattern: string): { test(s: string): boolean } {
  const re = compilePattern(pattern);
  return { test: (s: string) => re.test(s) };
}
re2Engine.code = 're2js';

function makeAjv(): Ajv {
  // Unknown keywords and formats are refused (a typo would otherwise validate nothing); the stricter
  // modes that refuse valid JSON Schema (`required` without `properties`, `properties` without a type) are off.
  const ajv = new Ajv({ allErrors: true, strictSchema: true, strictNumbers: true, strictTypes: false, strictTuples: false, strictRequired: false, code: { regExp: re2Engine }, $data: false });
  addFormats(ajv);
  return ajv;
}

/** A thread's Ajv: compiled schemas are kept by it, as are the validators below. */
let ajv: Ajv | undefined;
const validators = new Map<string, ItemValidator>();
const MAX_KEPT = 200;

/** The schema's problem (the API's INVALID_ITEM_SCHEMA), or null when it compiles within the bounds. */
export function itemSchemaProblem(text: string): string | null {
  try {
    itemValidator(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The validator of a schema text, compiled once per thread; throws (with the reason) when it cannot be used. */
export function itemValidator(text: string): ItemValidator {
  const kept = validators.get(text);
  if (kept) return kept;
  const schema = parseBounded(text);
  ajv ??= makeAjv();
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw new Error(`does not compile: ${(err as Error).message}`.slice(0, MAX_ERROR_CHARS), { cause: err });
  } finally {
    // Ajv keeps every schema it compiled by its $id; a thread that sees many specs must not grow with them.
    ajv.removeSchema(schema);
  }
  const validator: ItemValidator = (item) => (validate(item) ? [] : errorsOf(validate.errors ?? []));
  if (validators.size >= MAX_KEPT) validators.clear();
  validators.set(text, validator);
  return validator;
}

function parseBounded(text: string): object {
  if (Buffer.byteLength(text) > MAX_SCHEMA_BYTES) throw new Error(`is over ${MAX_SCHEMA_BYTES} bytes`);
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new Error(`is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('must be a JSON Schema object');
  const depth = depthOf(schema);
  if (depth > MAX_SCHEMA_DEPTH) throw new Error(`nests ${depth} levels deep; at most ${MAX_SCHEMA_DEPTH} are allowed`);
  return schema;
}

function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const v of Object.values(value)) deepest = Math.max(deepest, depthOf(v));
  return deepest + 1;
}

/** Errors as people read them: `/price must be number`, `must have required property 'title'`. */
function errorsOf(errors: readonly ErrorObject[]): string[] {
  const out: string[] = [];
  for (const e of errors.slice(0, MAX_ITEM_ERRORS)) {
    const text = `${e.instancePath === '' ? '' : `${e.instancePath} `}${e.message ?? e.keyword}`;
    out.push(text.length > MAX_ERROR_CHARS ? text.slice(0, MAX_ERROR_CHARS) : text);
  }
  if (errors.length > MAX_ITEM_ERRORS) out[MAX_ITEM_ERRORS - 1] = `… and ${errors.length - MAX_ITEM_ERRORS + 1} more errors`;
  return out;
}
