/**
 * The operator's user agent. By default it is honest: it names the software and its version and
 * says where whoever runs it can be reached — `Trawl/<version> (+<contact URL>)` — so that a site
 * owner who sees the traffic knows what it is and whom to ask. `TRAWL_CONTACT_URL` sets the contact
 * (a page or a `mailto:`), `TRAWL_USER_AGENT` the whole string.
 *
 * Its product token (the name before the first `/`) is what robots.txt groups are matched against,
 * whatever user agent a crawl sends: a site's rules for this crawler apply to every tenant's crawl,
 * and a tenant cannot step out of them by sending another name.
 */
import { readFileSync } from 'node:fs';
import { InvalidConfigError } from '../errors.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export const DEFAULT_CONTACT_URL = 'https://github.com/trawl';

export interface UserAgentConfig {
  /** The User-Agent of every request that does not set its own. */
  readonly userAgent: string;
  /** Matched against robots.txt `User-agent` lines. */
  readonly productToken: string;
}

export function defaultUserAgent(contactUrl: string = DEFAULT_CONTACT_URL): string {
  return `Trawl/${VERSION} (+${contactUrl})`;
}

/** The product token of a user agent: its first token, before any `/` or space (`Trawl/0.1 (+…)` → `Trawl`). */
export function productTokenOf(userAgent: string): string {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/.exec(userAgent.trim())?.[0]?.replace(/\/.*$/, '') ?? '';
}

/** `TRAWL_USER_AGENT`, else the default with `TRAWL_CONTACT_URL`; throws InvalidConfigError naming the setting. */
export function userAgentFromEnv(env: NodeJS.ProcessEnv = process.env): UserAgentConfig {
  const contact = env.TRAWL_CONTACT_URL?.trim() || DEFAULT_CONTACT_URL;
  if (!/^(https?:\/\/|mailto:)[^\s()]+$/.test(contact)) {
    throw new InvalidConfigError(`TRAWL_CONTACT_URL must be an http(s) or mailto: URL without spaces or parentheses, got "${contact}"`);
  }
  const userAgent = env.TRAWL_USER_AGENT?.trim() || defaultUserAgent(contact);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(userAgent) || userAgent.length > 512) throw new InvalidConfigError('TRAWL_USER_AGENT must be one line of at most 512 characters');
  const productToken = productTokenOf(userAgent);
  if (productToken === '') throw new InvalidConfigError(`TRAWL_USER_AGENT must start with a product token such as "MyCrawler/1.0", got "${userAgent}"`);
  return { userAgent, productToken };
}
