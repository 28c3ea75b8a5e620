/**
 * `npm run openapi -w @trawl/checks [-- <file>]`, run by `npm run lint`: checks the API's OpenAPI
 * document (src/openapi-check.ts) and exits 1 on any finding. Without a file it checks the live
 * document, built offline by the API (`npm run --silent openapi -w @trawl/api`: no stack needed),
 * not the committed copy in @trawl/client, whose drift from the live one its own test catches.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkOpenApi, countFindings } from './openapi-check.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The live document, as the API prints it. */
export async function liveDocument(): Promise<Record<string, unknown>> {
  // Stack endpoints that answer nothing: the document must not need one.
  const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', TRAWL_LOG_LEVEL: 'silent' };
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'openapi', '-w', '@trawl/api'], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

if (process.argv[1] === import.meta.filename) {
  const file = process.argv[2];
  const doc = file ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : await liveDocument();
  const findings = await checkOpenApi(doc);
  for (const f of findings) console.error(`${f.validator} ${f.rule}: ${f.message} (${f.at})`);
  const operations = Object.values((doc.paths ?? {}) as Record<string, object>).reduce((n, item) => n + Object.keys(item).length, 0);
  if (findings.length > 0) {
    console.error(`check-openapi: ${findings.length} finding(s) in ${file ?? 'the live document'} ${JSON.stringify(countFindings(findings))}`);
    process.exit(1);
  }
  console.log(`check-openapi: OpenAPI ${String(doc.openapi)}, ${operations} operations: valid (swagger-parser), no Redocly finding, every operation named and tagged`);
}
