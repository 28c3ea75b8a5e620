/**
 * Loads the `.avsc` files. Shared named types (CrawlSpec, RenderMode) live once in `avro/common/`
 * and are inlined where an event first names them, so each event's schema as registered is
 * self-contained (no registry references needed).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Schema } from 'avsc';
import { EVENT_NAMES, NAMESPACE, type EventName } from './names.ts';

export const AVRO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'avro');

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function readJson(file: string): Json {
  return JSON.parse(readFileSync(file, 'utf8')) as Json;
}

function qualify(name: string, namespace: string): string {
  return name.includes('.') ? name : `${namespace}.${name}`;
}

let commonCache: Map<string, Json> | undefined;

function commonTypes(): Map<string, Json> {
  if (!commonCache) {
    commonCache = new Map();
    const dir = join(AVRO_DIR, 'common');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.avsc')).sort()) {
      const schema = readJson(join(dir, file)) as { name: string; namespace?: string };
      commonCache.set(qualify(schema.name, schema.namespace ?? NAMESPACE), schema as Json);
    }
  }
  return commonCache;
}

/** Replaces the first reference to each common named type by its definition. */
export function inlineCommonTypes(schema: Json, common: Map<string, Json> = commonTypes()): Json {
  const defined = new Set<string>();
  const walk = (node: Json, namespace: string): Json => {
    if (typeof node === 'string') {
      const full = qualify(node, namespace);
      const def = common.get(full);
      if (def && !defined.has(full)) {
        return walk(structuredClone(def), namespace);
      }
      return node;
    }
    if (Array.isArray(node)) return node.map((n) => walk(n, namespace));
    if (node && typeof node === 'object') {
      const ns = typeof node.namespace === 'string' ? node.namespace : namespace;
      if (typeof node.name === 'string' && (node.type === 'record' || node.type === 'enum' || node.type === 'fixed')) {
        defined.add(qualify(node.name, ns));
      }
      const out: { [k: string]: Json } = {};
      for (const [k, v] of Object.entries(node)) {
        out[k] = k === 'type' || k === 'items' || k === 'values' || k === 'fields' ? walk(v, ns) : v;
      }
      return out;
    }
    return node;
  };
  return walk(schema, NAMESPACE);
}

const schemaCache = new Map<EventName, Schema>();

/** The self-contained Avro schema of an event, as it is registered. */
export function eventSchema(name: EventName): Schema {
  let schema = schemaCache.get(name);
  if (!schema) {
    schema = inlineCommonTypes(readJson(join(AVRO_DIR, 'events', `${name}.avsc`))) as unknown as Schema;
    schemaCache.set(name, schema);
  }
  return schema;
}

export function allEventSchemas(): Record<EventName, Schema> {
  return Object.fromEntries(EVENT_NAMES.map((n) => [n, eventSchema(n)])) as Record<EventName, Schema>;
}
