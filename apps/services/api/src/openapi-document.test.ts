/**
 * The OpenAPI document is complete enough to generate a typed client from (@trawl/client): every
 * operation says what it answers on success and, but for liveness, on failure; every object it
 * answers with on success names the fields that are always there. Built offline, as the client's
 * generator builds it: no stack needed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument, type OpenApiDocument } from './openapi-document.ts';
import { serversOf } from './openapi-operations.ts';

type Schema = Record<string, unknown>;
interface Operation {
  readonly operationId?: string;
  readonly requestBody?: unknown;
  readonly responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

let doc: OpenApiDocument;
const operations: [string, Operation][] = [];

/** The schema a `$ref` names in the document's components. */
function resolve(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const target = (doc.components as { schemas: Record<string, Schema> }).schemas[name];
  if (!target) throw new Error(`${ref} names no component`);
  return target;
}

/** Paths (within the schema) of objects with properties but no `required`. */
function unrequired(schema: Schema, at: string, seen = new Set<Schema>()): string[] {
  const s = resolve(schema);
  if (seen.has(s)) return [];
  seen.add(s);
  const out: string[] = [];
  const properties = s.properties as Record<string, Schema> | undefined;
  if (properties && !(Array.isArray(s.required) && s.required.length > 0)) out.push(at);
  for (const [name, child] of Object.entries(properties ?? {})) out.push(...unrequired(child, `${at}.${name}`, seen));
  if (s.items && typeof s.items === 'object') out.push(...unrequired(s.items as Schema, `${at}[]`, seen));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') out.push(...unrequired(s.additionalProperties as Schema, `${at}{}`, seen));
  return out;
}

beforeAll(async () => {
  doc = await openapiDocument();
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(methods)) operations.push([`${method.toUpperCase()} ${path}`, operation]);
  }
}, 120_000);

describe('the OpenAPI document', () => {
  it('has every route of the API and of the console it mounts', () => {
    const names = operations.map(([name]) => name);
    expect(names).toEqual(expect.arrayContaining(['POST /crawl', 'GET /jobs/{id}/status', 'POST /webhooks/{id}/deliveries/{delivery_id}/redeliver', 'GET /quotas', 'GET /dead-letters', 'GET /metrics/scrape']));
    expect(names.length).toBeGreaterThan(40);
  });

  it('says what every operation answers on success, and on failure (but liveness)', () => {
    const noSuccess = operations.filter(([, op]) => !Object.keys(op.responses).some((s) => /^(101|2\d\d)$/.test(s))).map(([name]) => name);
    const noFailure = operations.filter(([name, op]) => name !== 'GET /healthz' && !Object.keys(op.responses).some((s) => /^[45]/.test(s))).map(([name]) => name);
    expect(noSuccess).toEqual([]);
    expect(noFailure).toEqual([]);
  });

  it('names every operation (OPERATION_IDS), once', () => {
    expect(operations.filter(([, op]) => op.operationId === undefined).map(([name]) => name)).toEqual([]);
    const ids = operations.map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.fromEntries(operations.map(([name, op]) => [name, op.operationId]))).toMatchObject({ 'POST /crawl': 'createCrawl', 'GET /jobs/{id}/status': 'getJobStatus', 'GET /jobs/{id}/pages': 'listJobPages' });
  });

  it("says that every operation taking a body may answer the framework's 413 and 415", () => {
    const missing = operations.filter(([, op]) => op.requestBody !== undefined && !(op.responses['413'] && op.responses['415'])).map(([name]) => name);
    expect(operations.some(([, op]) => op.requestBody !== undefined)).toBe(true);
    expect(missing).toEqual([]);
  });

  it('declares 401 on every operation that needs a key, 404 on every one that names a resource (but create-or-replace), 500 on all but liveness', () => {
    const declares = (op: Operation, status: string) => op.responses[status] !== undefined || op.responses[`${status[0]}XX`] !== undefined;
    const keyed = operations.filter(([, op]) => (op as { security?: unknown[] }).security?.length !== 0);
    expect(keyed.filter(([, op]) => !declares(op, '401')).map(([name]) => name)).toEqual([]);
    expect(operations.filter(([name, op]) => name.includes('{') && !name.startsWith('PUT ') && !declares(op, '404')).map(([name]) => name)).toEqual([]);
    expect(operations.filter(([name, op]) => name !== 'GET /healthz' && !declares(op, '500')).map(([name]) => name)).toEqual([]);
  });

  it('is OpenAPI 3.1 and names the servers from the configuration', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://127.0.0.1:3000' })]);
    expect(serversOf({ publicUrl: 'https://trawl.example.com/, https://eu.trawl.example.com', host: '0.0.0.0', port: 3000 }).map((s) => s.url)).toEqual(['https://trawl.example.com', 'https://eu.trawl.example.com']);
    expect(serversOf({ publicUrl: '', host: '0.0.0.0', port: 8080 }).map((s) => s.url)).toEqual(['http://127.0.0.1:8080']);
    expect(serversOf({ publicUrl: '', host: '::1', port: 3000 }).map((s) => s.url)).toEqual(['http://[::1]:3000']);
  });

  it('names the fields that are always there in every object answered on success', () => {
    const loose = operations.flatMap(([name, op]) =>
      Object.entries(op.responses)
        .filter(([status]) => /^2\d\d$/.test(status))
        .flatMap(([status, response]) => Object.entries(response.content ?? {}).flatMap(([type, { schema }]) => (schema ? unrequired(schema, `${name} ${status} ${type}`) : []))),
    );
    expect(loose).toEqual([]);
  });
});
