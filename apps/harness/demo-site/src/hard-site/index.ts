/**
 * The "hard site": what people actually crawl, in one local server — a consent wall, a login with
 * a CSRF token, pages that need the session, a header check, a per-session rate limit that answers
 * a captcha, lists that load by script, canonical and nofollow links, pages reachable only through a
 * proxy, an article in boilerplate with a PDF and images to download. Each feature is a module of
 * its own (`./<feature>.ts`, keeping the contract of feature.ts) registered in {@link FEATURES}; a
 * module owns the paths under its prefix and says what a complete crawl of it must give.
 */
import { html, serve, type RunningServer } from '../serve.ts';
import type { HardSiteContext, HardSiteFeature } from './feature.ts';
import { dynamicLists } from './dynamic-lists.ts';
import { proxyOnly } from './proxy-only.ts';
import { members } from './members.ts';
import { linkRules } from './link-rules.ts';
import { rateLimit } from './rate-limit.ts';
import { documents } from './documents.ts';
import { structured } from './structured.ts';

export interface HardSiteOptions {
  readonly port?: number;
  readonly host?: string;
  /** Member pages one login session (`members_sid`) may fetch before each answers a captcha (members.ts); default: no limit. */
  readonly membersPageLimit?: number;
}

/** The features, each in its own module. */
const FEATURES: readonly HardSiteFeature[] = [dynamicLists, proxyOnly, members, linkRules, rateLimit, structured, documents];

export interface HardSite extends RunningServer {
  /** The home page: links to each feature's entry. */
  readonly home: string;
  readonly features: readonly HardSiteFeature[];
}

export async function createHardSite(options: HardSiteOptions = {}): Promise<HardSite> {
  let ctx: HardSiteContext = { origin: '' };
  const server = await serve(
    async (req, res, url) => {
      const feature = FEATURES.find((f) => url.pathname.startsWith(f.prefix));
      if (feature) return feature.handle(req, res, url, ctx);
      if (url.pathname === '/') {
        const links = FEATURES.map((f) => `<li><a href="${f.entry}">${f.prefix}</a></li>`).join('');
        html(res, 200, `<!doctype html><title>Hard site</title><ul>${links}</ul>`);
        return;
      }
      html(res, 404, '<!doctype html><title>Not found</title>');
    },
    { port: options.port, host: options.host },
  );
  ctx = { origin: server.origin, ...(options.membersPageLimit !== undefined ? { membersPageLimit: options.membersPageLimit } : {}) };
  return { ...server, bytesSent: () => server.bytesSent(), close: () => server.close(), home: `${server.origin}/`, features: FEATURES };
}
