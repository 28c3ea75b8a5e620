/**
 * The API's live OpenAPI document passes the check `npm run lint` runs (src/openapi-check.ts:
 * swagger-parser, Redocly's recommended rules, named and tagged operations), and the check fails
 * on what outside tools refuse: `propertyNames` in a 3.0 document, an operation without an
 * `operationId`, an undeclared tag, no `servers`. No stack needed (the document is built offline).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { checkOpenApi, countFindings } from '../src/openapi-check.ts';
import { liveDocument } from '../src/openapi-cli.ts';

type Json = Record<string, unknown>;
let live: Json;

beforeAll(async () => {
  live = await liveDocument();
}, 180_000);

/** `METHOD path` of every operation, with the operation. */
function operations(doc: Json): [string, Json][] {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]): [string, Json] => [`${method.toUpperCase()} ${path}`, op]));
}

describe('the live OpenAPI document', () => {
  it('has no finding: valid for swagger-parser, clean for Redocly, every operation named and tagged', async () => {
    expect(live.openapi).toBe('3.1.0');
    expect(await checkOpenApi(live)).toEqual([]);
  }, 60_000);

  it('names every operation once, and has servers', () => {
    const ids = operations(live).map(([, op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.fromEntries(operations(live).map(([name, op]) => [name, op.operationId]))).toMatchObject({
      'POST /crawl': 'createCrawl',
      'GET /jobs/{id}/status': 'getJobStatus',
      'GET /jobs/{id}/pages': 'listJobPages',
      'GET /jobs/{id}/pages/{fetch_id}/content': 'getPageContent',
    });
    expect(live.servers).toEqual([expect.objectContaining({ url: 'http://127.0.0.1:3000' })]);
  });

  it('keeps the request schemas the API validates with: propertyNames, credentials as a string or {secret}', () => {
    const crawl = (live.paths as Json)['/crawl'] as { post: { requestBody: { content: { 'application/json': { schema: { properties: Record<string, Json> } } } } } };
    const body = crawl.post.requestBody.content['application/json'].schema.properties;
    expect(body.headers).toMatchObject({ type: 'object', propertyNames: { minLength: 1 } });
    const credential = (body.headers!.additionalProperties as { oneOf: Json[] }).oneOf;
    expect(credential).toEqual([expect.objectContaining({ type: 'string' }), expect.objectContaining({ type: 'object', required: ['secret'] })]);
  });
});

describe('the check', () => {
  it('fails on a 3.0 document with propertyNames, an unnamed operation, an undeclared tag and no servers', async () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      tags: [{ name: 'jobs' }],
      paths: {
        '/crawl': {
          post: {
            tags: ['crawl'],
            requestBody: { content: { 'application/json': { schema: { type: 'object', propertyNames: { minLength: 1 } } } } },
            responses: { 200: { description: 'ok' }, 400: { description: 'bad' } },
          },
        },
      },
    };
    const counts = countFindings(await checkOpenApi(doc));
    expect(Object.keys(counts)).toEqual(expect.arrayContaining(['redocly/struct', 'redocly/operation-operationId', 'redocly/operation-tag-defined', 'redocly/no-empty-servers']));
    expect(Object.keys(counts).some((k) => k.startsWith('swagger-parser/'))).toBe(true);
  });

  it('fails on the live document when one operation loses its operationId or its tags', async () => {
    const doc = structuredClone(live);
    const [, op] = operations(doc).find(([name]) => name === 'GET /jobs/{id}/pages')!;
    delete op.operationId;
    op.tags = [];
    const findings = await checkOpenApi(doc);
    expect(findings.map((f) => `${f.rule} ${f.at}`)).toEqual(
      expect.arrayContaining(['operation-operationId #/paths/~1jobs~1{id}~1pages/get/operationId', 'operation-tagged #/paths/~1jobs~1{id}~1pages/get']),
    );
  }, 60_000);

  it('fails on a name that is not camelCase', async () => {
    const doc = structuredClone(live);
    operations(doc)[0]![1].operationId = 'jobs_id_pages_get';
    expect(countFindings(await checkOpenApi(doc))).toEqual({ 'trawl/operation-id-camel-case': 1 });
  }, 60_000);
});
