import { join } from 'node:path';
import { repoRoot, trawlHome } from '@trawl/streams';

export { repoRoot };

export function logsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(trawlHome(env), 'logs');
}

export function runDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(trawlHome(env), 'run');
}

/** Where `trawl demo` keeps its API key (mode 0600), read by `crawl`, `jobs` and `logs`. */
export function apiKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(trawlHome(env), 'api-key');
}
