/**
 * `trawl crawl`'s flags for reaching sites and for link rules, as the body fields of `POST /crawl`
 * (the README's "Reaching sites"). The API checks the values (a `Host` header, a proxy on a private
 * address, a pattern RE2 does not run… are refused there, with a code); here only the shape of each
 * flag is, and a bad one exits 2 like any usage error.
 */
import { readFileSync } from 'node:fs';
import type { paths } from '@trawl/client';
import { CliError } from '../lib/cli-error.ts';

type CrawlRequestBody = NonNullable<paths['/crawl']['post']['requestBody']>['content']['application/json'];

/** The fields these flags set. */
export type OptionsBody = Pick<
  CrawlRequestBody,
  'headers' | 'user_agent' | 'locale' | 'cookies' | 'proxies' | 'sessions' | 'login' | 'actions' | 'include_patterns' | 'exclude_patterns' | 'scope' | 'follow_nofollow'
>;

/** The flags as node:util's parseArgs gives them (repeatable ones as lists). */
export interface CrawlFlags {
  readonly header?: readonly string[];
  readonly 'user-agent'?: string;
  readonly locale?: string;
  readonly cookie?: readonly string[];
  readonly proxy?: readonly string[];
  readonly sessions?: string;
  readonly 'login-url'?: string;
  readonly 'login-field'?: readonly string[];
  readonly 'login-secret'?: readonly string[];
  readonly 'login-success'?: string;
  readonly actions?: string;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly scope?: string;
  readonly 'follow-nofollow'?: boolean;
}

/** The parseArgs options of these flags. */
export const CRAWL_FLAG_OPTIONS = {
  header: { type: 'string', multiple: true },
  'user-agent': { type: 'string' },
  locale: { type: 'string' },
  cookie: { type: 'string', multiple: true },
  proxy: { type: 'string', multiple: true },
  sessions: { type: 'string' },
  'login-url': { type: 'string' },
  'login-field': { type: 'string', multiple: true },
  'login-secret': { type: 'string', multiple: true },
  'login-success': { type: 'string' },
  actions: { type: 'string' },
  // `--include` is also export's format: both are lists here (export takes one).
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  scope: { type: 'string' },
  'follow-nofollow': { type: 'boolean' },
} as const;

export const CRAWL_FLAGS_USAGE = `      --header 'Name: value'  an extra request header (repeatable)
      --user-agent UA       the crawl's User-Agent (default: the server's Trawl/<version>)
      --locale TAG          Accept-Language and the browser's locale (fr-CH)
      --cookie DOMAIN=SETCOOKIE   an initial cookie for a domain: shop.example='consent=yes; Path=/' (repeatable)
      --proxy URL           an http://, https:// or socks5:// proxy (repeatable: a pool)
      --sessions N          a session pool of N cookie jars (a login runs once per session)
      --login-url URL       a form login at URL (needs --sessions), with
      --login-field NAME=VALUE      a form field's literal value (repeatable)
      --login-secret NAME=SECRET    a form field's value from your secret SECRET (repeatable)
      --login-success SELECTOR      logged in when the page after the login has it
      --actions JSON|FILE   browser actions: a JSON list, or a file holding one
      --include PATTERN     follow only links matching one of these RE2 patterns (repeatable)
      --exclude PATTERN     follow no link matching one of these (repeatable)
      --scope S             same_host (default) | same_domain | any
      --follow-nofollow     follow rel=nofollow links too`;

function usage(message: string): never {
  throw new CliError(message, 2);
}

/** `NAME<sep>VALUE` split at the first separator, both sides non-empty (the value trimmed of leading spaces for headers). */
function pair(flag: string, raw: string, sep: string): [string, string] {
  const at = raw.indexOf(sep);
  if (at <= 0 || at === raw.length - 1) usage(`--${flag} must be NAME${sep}VALUE, not "${raw}"`);
  return [raw.slice(0, at).trim(), raw.slice(at + 1)];
}

/** The JSON of `--actions`: the string itself when it looks like JSON, else the file it names. */
function actionsOf(raw: string): OptionsBody['actions'] {
  let text = raw;
  if (!raw.trimStart().startsWith('[')) {
    try {
      text = readFileSync(raw, 'utf8');
    } catch (err) {
      usage(`--actions: neither a JSON list nor a readable file: ${(err as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    usage(`--actions is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) usage('--actions must be a JSON list of actions ([{"type": "click", "selector": "…"}, …])');
  return parsed as OptionsBody['actions'];
}

/** The body fields of the flags given (none for none). */
export function optionsBody(flags: CrawlFlags): Partial<OptionsBody> {
  const body: { -readonly [K in keyof OptionsBody]?: OptionsBody[K] } = {};
  if (flags.header?.length) body.headers = Object.fromEntries(flags.header.map((h) => pair('header', h, ':')).map(([n, v]) => [n, v.trimStart()]));
  if (flags['user-agent'] !== undefined) body.user_agent = flags['user-agent'];
  if (flags.locale !== undefined) body.locale = flags.locale;
  if (flags.cookie?.length) {
    const cookies: Record<string, string[]> = {};
    for (const c of flags.cookie) {
      const [domain, cookie] = pair('cookie', c, '=');
      (cookies[domain.toLowerCase()] ??= []).push(cookie);
    }
    body.cookies = cookies;
  }
  if (flags.proxy?.length) body.proxies = [...flags.proxy];
  if (flags.sessions !== undefined) {
    const n = Number(flags.sessions);
    if (!Number.isInteger(n) || n < 0 || n > 100) usage('--sessions must be a whole number from 0 to 100');
    body.sessions = n;
  }
  const loginParts = [flags['login-field'], flags['login-secret'], flags['login-success']].some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
  if (flags['login-url'] !== undefined) {
    const fields: Record<string, string | { secret: string }> = {};
    for (const f of flags['login-field'] ?? []) {
      const [name, value] = pair('login-field', f, '=');
      fields[name] = value;
    }
    for (const f of flags['login-secret'] ?? []) {
      const [name, secret] = pair('login-secret', f, '=');
      fields[name] = { secret };
    }
    body.login = { kind: 'form', url: flags['login-url'], fields, ...(flags['login-success'] === undefined ? {} : { success_selector: flags['login-success'] }) };
  } else if (loginParts) usage('--login-field, --login-secret and --login-success need --login-url');
  if (flags.actions !== undefined) body.actions = actionsOf(flags.actions);
  if (flags.include?.length) body.include_patterns = [...flags.include];
  if (flags.exclude?.length) body.exclude_patterns = [...flags.exclude];
  if (flags.scope !== undefined) {
    if (flags.scope !== 'same_host' && flags.scope !== 'same_domain' && flags.scope !== 'any') usage(`--scope must be same_host, same_domain or any, not "${flags.scope}"`);
    body.scope = flags.scope;
  }
  if (flags['follow-nofollow'] !== undefined) body.follow_nofollow = flags['follow-nofollow'];
  return body;
}
