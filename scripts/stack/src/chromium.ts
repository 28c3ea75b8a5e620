/**
 * Chromium: nothing to start (puppeteer launches it per worker), only located and checked, so a
 * missing or broken browser shows up at `up` rather than at the first page that needs JavaScript.
 */
import { accessSync, constants } from 'node:fs';
import { endpoints } from '@trawl/streams';
import { userEndpoint, type StackContext } from './context.ts';
import { MissingDependencyError } from './errors.ts';
import type { PartStatus, PartUp } from './part.ts';
import { run } from './process.ts';

const PART = 'chromium';

/** Runs `<path> --version`; the version line, or why it failed. */
export async function chromiumVersion(path: string): Promise<{ ok: true; version: string } | { ok: false; why: string }> {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { ok: false, why: `${path} is not an executable file` };
  }
  // Debian's /usr/bin/chromium is a wrapper script that may print shell noise on stderr: keep the version line.
  const r = await run(path, ['--version'], { timeoutMs: 20_000 });
  const line = r.output.split('\n').find((l) => /chrom/i.test(l) && /\d+\.\d+/.test(l));
  // "Chromium 156.0.8078.79 built on Debian GNU/Linux 12 (bookworm)": the build note is noise here.
  if (r.code === 0 && line) return { ok: true, version: line.trim().replace(/\s+built on .*$/, '') };
  return { ok: false, why: `\`${path} --version\` exited ${r.code}: ${r.output.trim().split('\n').slice(-3).join(' | ')}` };
}

export async function chromiumUp(ctx: StackContext): Promise<PartUp> {
  const path = endpoints(ctx.env).chromiumPath;
  const res = await chromiumVersion(path);
  if (!res.ok) {
    throw new MissingDependencyError(PART, res.why, 'run `npm run setup` (installs Debian\'s chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary');
  }
  const user = userEndpoint(ctx, 'CHROMIUM_PATH');
  return { part: PART, action: 'checked', endpoint: path, note: user ? `${res.version}, from CHROMIUM_PATH` : res.version };
}

export async function chromiumStatus(ctx: StackContext): Promise<PartStatus> {
  const path = endpoints(ctx.env).chromiumPath;
  const res = await chromiumVersion(path);
  return { part: PART, state: res.ok ? 'up' : 'down', ours: false, endpoint: path, note: res.ok ? res.version : res.why };
}
