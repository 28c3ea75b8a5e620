/**
 * The built console in memory: index.html and the hashed assets, loaded once (building first when
 * needed). Concurrent first requests share one build.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { buildBundle, currentBuild, DEFAULT_DIST_DIR, type BundleManifest } from './bundle.ts';

export interface LoadedAssets {
  readonly manifest: BundleManifest;
  readonly index: Buffer;
  /** `app-<hash>.js` → bytes. */
  readonly files: ReadonlyMap<string, Buffer>;
}

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

export class ConsoleAssets {
  private loading: Promise<LoadedAssets> | undefined;

  constructor(private readonly distDir: string = DEFAULT_DIST_DIR) {}

  load(): Promise<LoadedAssets> {
    this.loading ??= this.read().catch((err: unknown) => {
      this.loading = undefined; // a failed build is retried by the next request
      throw err;
    });
    return this.loading;
  }

  private async read(): Promise<LoadedAssets> {
    const manifest = currentBuild(this.distDir) ?? (await buildBundle({ distDir: this.distDir }));
    const dir = join(this.distDir, 'assets');
    const files = new Map<string, Buffer>();
    for (const name of readdirSync(dir)) if (CONTENT_TYPES[extname(name)]) files.set(name, readFileSync(join(dir, name)));
    return { manifest, index: readFileSync(join(this.distDir, 'index.html')), files };
  }
}
