/**
 * Avro schema resolution used to read less: a reader schema holding only some of a writer's
 * fields makes avsc skip the others in the bytes (a string's length is read, its characters are
 * never turned into a JS string; an array or a map is stepped over). A projection that stores a
 * few fields of each event — the analytics keep neither a page's links nor an item's fields —
 * decodes several times less this way, and leaves the garbage collector less to do.
 */
import type { Resolver, Schema, Type } from 'avsc';
import { avroType } from '@trawl/schemas';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const NAMED = new Set(['record', 'error', 'enum', 'fixed']);

/** The full name of a named-type definition (avsc exports full names; namespace kept in case). */
function fullNameOf(def: { [key: string]: Json }): string {
  const name = String(def.name);
  return name.includes('.') || typeof def.namespace !== 'string' || def.namespace === '' ? name : `${def.namespace}.${name}`;
}

/** Every named type defined anywhere in a schema, by full name. */
function collectDefinitions(node: Json, into: Map<string, { [key: string]: Json }>): void {
  if (Array.isArray(node)) {
    for (const n of node) collectDefinitions(n, into);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (typeof node.type === 'string' && NAMED.has(node.type) && typeof node.name === 'string') into.set(fullNameOf(node), node);
  for (const value of Object.values(node)) collectDefinitions(value, into);
}

/**
 * A copy of `node` in which each named type is defined at its first use and referred to by name
 * afterwards: a kept field may use a type the writer defined inside a field that is dropped.
 */
function relink(node: Json, definitions: ReadonlyMap<string, { [key: string]: Json }>, defined: Set<string>): Json {
  if (typeof node === 'string') {
    const def = definitions.get(node);
    if (!def || defined.has(node)) return node;
    return relink(def, definitions, defined);
  }
  if (Array.isArray(node)) return node.map((n) => relink(n, definitions, defined));
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.type === 'string' && NAMED.has(node.type) && typeof node.name === 'string') {
    const name = fullNameOf(node);
    if (defined.has(name)) return name;
    defined.add(name);
  }
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === 'type' || key === 'items' || key === 'values' || key === 'fields' ? relink(value, definitions, defined) : value;
  return out;
}

export interface ProjectedReader {
  /** The reader type: the writer's record with only the kept fields. */
  readonly type: Type;
  /** avsc's resolver from the writer's schema to the reader's: pass both to `type.fromBuffer`. */
  readonly resolver: Resolver;
}

/**
 * A reader of `writer`'s records that keeps only the fields named in `keep` (names the writer
 * lacks are ignored: the value lacks them, as it would decoded with the writer's schema itself).
 */
export function projectedReader(writer: Type, keep: readonly string[]): ProjectedReader {
  const schema = writer.schema({ exportAttrs: true }) as unknown as { [key: string]: Json };
  if (schema.type !== 'record' || !Array.isArray(schema.fields)) throw new Error(`only records can be projected, not ${String(writer.typeName)}`);
  const definitions = new Map<string, { [key: string]: Json }>();
  collectDefinitions(schema.fields, definitions);
  const wanted = new Set(keep);
  const defined = new Set<string>([fullNameOf(schema)]);
  const fields = (schema.fields as { [key: string]: Json }[]).filter((f) => wanted.has(String(f.name))).map((f) => relink(f, definitions, defined));
  const type = avroType({ ...schema, fields } as unknown as Schema);
  return { type, resolver: type.createResolver(writer) };
}
