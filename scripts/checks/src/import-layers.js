/**
 * The layers of the house, as an ESLint rule over import specifiers (`@trawl/<name>` and relative
 * paths). A package's layer is its folder: schemas, base, streams, apps/libs, apps/services,
 * apps/harness, apps/tools (and scripts/*, the repository's own tooling, as tools); one library,
 * apps/libs/client, has a role of its own (client).
 *
 * Production code (anything but tests and benches) may import:
 *   schemas   nothing of Trawl
 *   base      schemas: what every service needs (configuration, logging, metrics, tracing, errors,
 *             ids), with no Kafka client, so that a library that talks to no Kafka loads none
 *   streams   schemas, base
 *   client    nothing of Trawl: it is generated from the API's OpenAPI document, not from its code,
 *             and runs in programs of users and in browsers, without Trawl's packages
 *   libs      schemas, base, streams, the client, other libraries
 *   services  schemas, base, streams, libraries, the client — never another service
 *   harness   anything but tools (a harness stands services up and may build on another harness)
 *   tools     anything (a tool such as the CLI starts services and manages the API's keys)
 * Tests and benches (test/, bench/, *.test.ts) stand real systems up, so they may import any
 * package. Nobody reaches into another package by a relative path: packages are imported by name.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** What each layer's production code may import. */
export const ALLOWED = {
  schemas: [],
  base: ['schemas'],
  streams: ['schemas', 'base'],
  client: [],
  libs: ['schemas', 'base', 'streams', 'client', 'libs'],
  services: ['schemas', 'base', 'streams', 'client', 'libs'],
  harness: ['schemas', 'base', 'streams', 'client', 'libs', 'services', 'harness'],
  tools: ['schemas', 'base', 'streams', 'client', 'libs', 'services', 'harness', 'tools'],
};

/** Folders whose package has a role of its own rather than its folder's layer. */
const ROLES = { 'apps/libs/client': 'client' };

const WHY = {
  schemas: 'schemas are the bottom layer',
  base: 'base builds on schemas alone, and loads no Kafka client',
  streams: 'streams builds on schemas and base alone',
  client: "the client is generated from the API's OpenAPI document, not from Trawl's code, and ships to users alone",
  libs: 'libraries never import services, harnesses or tools',
  services: 'services import libraries only, never another service',
  harness: 'harnesses never import tools',
  tools: '',
};

/** The layer of a package folder relative to the repository root, e.g. `apps/services/api`. */
export function layerOf(dir) {
  if (dir in ROLES) return ROLES[dir];
  const parts = dir.split('/');
  if (parts[0] === 'schemas' || parts[0] === 'base' || parts[0] === 'streams') return parts[0];
  if (parts[0] === 'apps' && parts[1] in ALLOWED) return parts[1];
  if (parts[0] === 'scripts') return 'tools';
  return undefined;
}

/** Every workspace package: name → folder (relative, `/`-separated) and layer. */
export function workspacePackages(root = REPO_ROOT) {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dirs = workspaces.flatMap((w) =>
    w.endsWith('/*')
      ? readdirSync(join(root, w.slice(0, -2)), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => `${w.slice(0, -2)}/${e.name}`)
      : [w],
  );
  const byName = new Map();
  for (const dir of dirs) {
    const manifest = join(root, dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name } = JSON.parse(readFileSync(manifest, 'utf8'));
    byName.set(name, { name, dir, layer: layerOf(dir) });
  }
  return byName;
}

const TEST_CODE = /(^|\/)(test|bench)\/|\.test\.ts$/;

let cached;
function packages() {
  return (cached ??= workspacePackages());
}

/** The package holding a file (path relative to the root), by the longest folder that contains it. */
function packageOfFile(rel) {
  let best;
  for (const pkg of packages().values()) {
    if ((rel === pkg.dir || rel.startsWith(`${pkg.dir}/`)) && (!best || pkg.dir.length > best.dir.length)) best = pkg;
  }
  return best;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'keeps imports within the layers: schemas ← base ← streams ← libs ← services; harness and tools on top' },
    schema: [],
    messages: {
      layer: "{{from}} ({{fromLayer}}) may not import {{to}} ({{toLayer}}): {{why}}",
      relative: '{{from}} reaches into {{to}} by a relative path: import it by its package name',
    },
  },
  create(context) {
    const file = context.physicalFilename ?? context.filename;
    const rel = relative(REPO_ROOT, file).split(sep).join('/');
    const from = packageOfFile(rel);
    if (!from?.layer) return {};
    const testCode = TEST_CODE.test(rel.slice(from.dir.length + 1));

    function check(node, source) {
      if (typeof source !== 'string') return;
      let to;
      if (source.startsWith('.')) {
        const target = relative(REPO_ROOT, resolve(dirname(file), source)).split(sep).join('/');
        to = packageOfFile(target);
        if (to && to !== from) context.report({ node, messageId: 'relative', data: { from: from.name, to: to.name } });
        return;
      }
      const name = source.match(/^@trawl\/[^/]+/)?.[0];
      to = name ? packages().get(name) : undefined;
      if (!to?.layer || to === from || testCode) return;
      if (!ALLOWED[from.layer].includes(to.layer)) {
        context.report({ node, messageId: 'layer', data: { from: from.name, fromLayer: from.layer, to: to.name, toLayer: to.layer, why: WHY[from.layer] } });
      }
    }

    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
