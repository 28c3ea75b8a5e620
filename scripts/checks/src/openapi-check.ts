/**
 * The API's OpenAPI document as outside tools read it. Two kept validators and the names clients
 * are generated with:
 *
 *   * swagger-parser (`@apidevtools/swagger-parser`): the document against the OpenAPI schema of
 *     its version, then the spec's own rules (unique operation ids, path parameters declared…);
 *   * Redocly (`@redocly/openapi-core`, what `redocly lint` runs) with its `recommended` rules,
 *     stricter where clients depend on it: an operation without an `operationId`, or with a tag
 *     the document does not declare, is an error, not a warning;
 *   * and ours: every operation has a tag and a camelCase `operationId` (`createCrawl`).
 *
 * A finding is any error or warning; ACCEPTED lists the ones that are the API's nature, each with
 * why. Used by `npm run lint` (src/openapi-cli.ts) and test/openapi.test.ts.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';

export interface Finding {
  readonly validator: 'swagger-parser' | 'redocly' | 'trawl';
  readonly rule: string;
  readonly message: string;
  /** A JSON pointer into the document, when the validator says where. */
  readonly at: string;
}

/** Findings that describe the API as it is meant to be: `rule at` → why. */
export const ACCEPTED: Readonly<Record<string, string>> = {
  'operation-4xx-response #/paths/~1healthz/get/responses': 'liveness takes no key, no input and no rate limit: it answers 200 or not at all',
  'operation-2xx-response #/paths/~1events/get/responses': 'the WebSocket feed answers 101 Switching Protocols, never 2xx',
};

const REDOCLY_RULES = {
  'operation-operationId': 'error',
  'operation-tag-defined': 'error',
  'operation-2xx-response': 'error',
  'operation-4xx-response': 'error',
  'no-empty-servers': 'error',
  // The project names no licence; the document cannot claim one.
  'info-license': 'off',
} as const;

const CAMEL_CASE = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*$/;
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type Json = Record<string, unknown>;

/** `~` and `/` escaped, as in a JSON pointer. */
const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

async function swaggerParser(doc: Json): Promise<Finding[]> {
  try {
    // It dereferences the document it is given in place: give it a copy.
    await SwaggerParser.validate(structuredClone(doc) as never);
    return [];
  } catch (err) {
    const details = (err as { details?: { instancePath?: string; message?: string; keyword?: string }[] }).details;
    if (Array.isArray(details) && details.length > 0) {
      return details.map((d) => ({ validator: 'swagger-parser', rule: d.keyword ?? 'schema', message: d.message ?? String(err), at: `#${d.instancePath ?? ''}` }));
    }
    return [{ validator: 'swagger-parser', rule: 'spec', message: (err as Error).message, at: '#' }];
  }
}

async function redocly(doc: Json): Promise<Finding[]> {
  const config = await createConfig({ extends: ['recommended'], rules: REDOCLY_RULES });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  return problems.map((p) => ({ validator: 'redocly', rule: p.ruleId, message: p.message, at: p.location[0]?.pointer ?? '#' }));
}

function trawlRules(doc: Json): Finding[] {
  const findings: Finding[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      const op = operation as { operationId?: unknown; tags?: unknown };
      const at = pointer('paths', path, method);
      if (typeof op.operationId === 'string' && !CAMEL_CASE.test(op.operationId)) {
        findings.push({ validator: 'trawl', rule: 'operation-id-camel-case', message: `operationId "${op.operationId}" is not camelCase`, at });
      }
      if (!Array.isArray(op.tags) || op.tags.length === 0) findings.push({ validator: 'trawl', rule: 'operation-tagged', message: 'operation has no tag', at });
    }
  }
  return findings;
}

/** Every finding of the three, but those in ACCEPTED. */
export async function checkOpenApi(doc: Json): Promise<Finding[]> {
  const all = [...(await swaggerParser(doc)), ...(await redocly(doc)), ...trawlRules(doc)];
  return all.filter((f) => ACCEPTED[`${f.rule} ${f.at}`] === undefined);
}

/** Counts by validator and rule, for a summary line. */
export function countFindings(findings: readonly Finding[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of findings) counts[`${f.validator}/${f.rule}`] = (counts[`${f.validator}/${f.rule}`] ?? 0) + 1;
  return counts;
}
