/**
 * The layer rule bites: ESLint with the repository's own configuration, on a fixture linted as if
 * it lived in a given package (lintText with that file path).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, workspacePackages } from '../src/import-layers.js';

const eslint = new ESLint({ cwd: REPO_ROOT });
const SERVICE_IMPORTS_SERVICE = readFileSync(join(import.meta.dirname, 'fixtures', 'service-imports-service.ts'), 'utf8');

async function layerErrors(code: string, asFile: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, asFile) });
  return result!.messages.filter((m) => m.ruleId === 'trawl/import-layers').map((m) => m.message);
}

describe('import layers', () => {
  it('refuses a service importing a service', async () => {
    expect(await layerErrors(SERVICE_IMPORTS_SERVICE, 'apps/services/api/src/fixture.ts')).toEqual([
      '@trawl/api (services) may not import @trawl/dispatcher (services): services import libraries only, never another service',
    ]);
  });

  it('refuses a library importing a service, a harness or a tool', async () => {
    const code = "import '@trawl/api';\nimport '@trawl/demo-site';\nimport '@trawl/cli';\n";
    expect(await layerErrors(code, 'apps/libs/store/src/fixture.ts')).toHaveLength(3);
  });

  it('refuses streams importing anything above it, and schemas importing streams', async () => {
    expect(await layerErrors("import { uuidv5 } from '@trawl/streams';\n", 'schemas/src/fixture.ts')).toHaveLength(1);
    expect(await layerErrors("import { jobIdForSlot } from '@trawl/store';\n", 'streams/src/fixture.ts')).toHaveLength(1);
  });

  it('refuses base importing the Kafka runtime or anything above it, and lets libraries build on base', async () => {
    expect(await layerErrors("import { TOPICS } from '@trawl/streams';\nimport '@trawl/store';\n", 'base/src/fixture.ts')).toEqual([
      '@trawl/base (base) may not import @trawl/streams (streams): base builds on schemas alone, and loads no Kafka client',
      '@trawl/base (base) may not import @trawl/store (libs): base builds on schemas alone, and loads no Kafka client',
    ]);
    expect(await layerErrors("import { endpoints } from '@trawl/base';\nimport { TrawlError } from '@trawl/schemas';\n", 'apps/libs/content/src/fixture.ts')).toEqual([]);
    expect(await layerErrors("import { createLogger } from '@trawl/base';\n", 'streams/src/fixture.ts')).toEqual([]);
  });

  it('refuses the client importing anything of Trawl: it is generated from the document, not from the code', async () => {
    const code = "import { buildApp } from '@trawl/api';\nimport { endpoints } from '@trawl/streams';\nimport '@trawl/store';\n";
    expect(await layerErrors(code, 'apps/libs/client/src/fixture.ts')).toEqual([
      "@trawl/client (client) may not import @trawl/api (services): the client is generated from the API's OpenAPI document, not from Trawl's code, and ships to users alone",
      "@trawl/client (client) may not import @trawl/streams (streams): the client is generated from the API's OpenAPI document, not from Trawl's code, and ships to users alone",
      "@trawl/client (client) may not import @trawl/store (libs): the client is generated from the API's OpenAPI document, not from Trawl's code, and ships to users alone",
    ]);
  });

  it('lets libraries, services and tools import the client', async () => {
    expect(await layerErrors("import { createTrawlClient } from '@trawl/client';\n", 'apps/libs/console/src/web/fixture.ts')).toEqual([]);
    expect(await layerErrors("import { createTrawlClient } from '@trawl/client';\n", 'apps/services/webhooks/src/fixture.ts')).toEqual([]);
    expect(await layerErrors("import { createTrawlClient } from '@trawl/client';\n", 'apps/tools/cli/src/fixture.ts')).toEqual([]);
  });

  it('refuses reaching into another package by a relative path', async () => {
    const errors = await layerErrors("import '../../dispatcher/src/dispatcher.ts';\n", 'apps/services/api/src/fixture.ts');
    expect(errors).toEqual(['@trawl/api reaches into @trawl/dispatcher by a relative path: import it by its package name']);
  });

  it('lets a service import libraries, streams and schemas', async () => {
    const code = "import '@trawl/store';\nimport '@trawl/crawl';\nimport '@trawl/streams';\nimport '@trawl/schemas';\n";
    expect(await layerErrors(code, 'apps/services/frontier/src/fixture.ts')).toEqual([]);
  });

  it('lets harnesses build on harnesses and services, tools on anything, tests stand services up', async () => {
    expect(await layerErrors("import '@trawl/e2e';\nimport '@trawl/projector-ch';\n", 'apps/harness/bench/src/fixture.ts')).toEqual([]);
    expect(await layerErrors("import '@trawl/api';\n", 'apps/tools/cli/src/fixture.ts')).toEqual([]);
    expect(await layerErrors(SERVICE_IMPORTS_SERVICE, 'apps/services/api/test/fixture.test.ts')).toEqual([]);
  });

  it('knows the layer of every workspace package', () => {
    const unplaced = [...workspacePackages().values()].filter((p) => !p.layer).map((p) => p.dir);
    expect(unplaced).toEqual([]);
  });
});
