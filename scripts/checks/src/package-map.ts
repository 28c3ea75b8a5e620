/**
 * The package map of docs/architecture.md, generated from the workspace's `package.json` files
 * (name, folder, description, the Trawl packages production code depends on) and the layer each
 * folder is in (src/import-layers.js), so that a package added, moved or re-described shows in the
 * docs: a test compares the committed map with this.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GeneratedBlock } from './generated-block.ts';
import { REPO_ROOT, workspacePackages } from './import-layers.js';
import { ARCHITECTURE_DOC } from './topic-map.ts';

interface Manifest {
  readonly description?: string;
  readonly dependencies?: Record<string, string>;
}

/** Workspace packages with no description in their package.json. */
export function packagesWithoutDescription(): string[] {
  return [...workspacePackages().values()].filter((p) => !manifest(p.dir).description).map((p) => p.name);
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Manifest;
}

const LAYER_ORDER = ['schemas', 'base', 'streams', 'client', 'libs', 'services', 'harness', 'tools'];

export const PACKAGE_MAP: GeneratedBlock = {
  file: ARCHITECTURE_DOC,
  name: 'package-map',
  render() {
    const packages = [...workspacePackages().values()].sort(
      (a, b) => LAYER_ORDER.indexOf(a.layer ?? '') - LAYER_ORDER.indexOf(b.layer ?? '') || a.dir.localeCompare(b.dir),
    );
    const rows = packages.map((p) => {
      const m = manifest(p.dir);
      const uses = Object.keys(m.dependencies ?? {}).filter((d) => d.startsWith('@trawl/')).sort();
      const cell = (m.description ?? '?').replace(/\|/g, '\\|');
      return `| \`${p.name}\` | \`${p.dir}\` | ${p.layer ?? '?'} | ${cell} | ${uses.map((u) => u.slice('@trawl/'.length)).join(', ') || '–'} |`;
    });
    return ['| package | folder | layer | what | uses (production dependencies) |', '|---|---|---|---|---|', ...rows].join('\n');
  },
};
