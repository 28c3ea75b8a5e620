/**
 * The new-crawl form's "Reaching the site" and "Links" fields as `POST /crawl` body fields (the
 * root README's "Reaching sites"). What each value may be is the API's to check (it answers a bad
 * header, proxy, secret name, action or pattern with a code, shown under the form); here only the
 * shape of the text is, with a message naming the field.
 */
import type { paths } from '@trawl/client';

type CrawlRequest = paths['/crawl']['post']['requestBody']['content']['application/json'];

export type CrawlOptionsBody = Partial<
  Pick<CrawlRequest, 'headers' | 'user_agent' | 'proxies' | 'sessions' | 'login' | 'actions' | 'include_patterns' | 'exclude_patterns' | 'scope' | 'follow_nofollow'>
>;

/** The form's text, as typed. */
export interface CrawlOptionsForm {
  /** `Name: value`, one a line. */
  readonly headers: string;
  readonly userAgent: string;
  /** Proxy URLs, one a line. */
  readonly proxies: string;
  /** The login page (a form login). */
  readonly loginUrl: string;
  /** `field=secret-name`, one a line: each form field's value is one of your secrets. */
  readonly loginSecrets: string;
  /** A JSON list of browser actions. */
  readonly actions: string;
  /** RE2 patterns, one a line. */
  readonly include: string;
  readonly exclude: string;
  /** '' (the default: same host), same_host, same_domain or any. */
  readonly scope: string;
  readonly followNofollow: boolean;
}

export class CrawlOptionsError extends Error {}

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

function pairs(label: string, text: string, sep: string): [string, string][] {
  return lines(text).map((line) => {
    const at = line.indexOf(sep);
    if (at <= 0 || at === line.length - 1) throw new CrawlOptionsError(`${label}: "${line}" is not name${sep}value`);
    return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
  });
}

/** The body fields the form sets (none for an untouched form). Throws {@link CrawlOptionsError}. */
export function crawlOptionsBody(form: CrawlOptionsForm): CrawlOptionsBody {
  const body: { -readonly [K in keyof CrawlOptionsBody]: CrawlOptionsBody[K] } = {};
  const headers = pairs('Headers', form.headers, ':');
  if (headers.length) body.headers = Object.fromEntries(headers);
  if (form.userAgent.trim()) body.user_agent = form.userAgent.trim();
  const proxies = lines(form.proxies);
  if (proxies.length) body.proxies = proxies;
  const secrets = pairs('Login fields', form.loginSecrets, '=');
  if (form.loginUrl.trim()) {
    body.login = { kind: 'form', url: form.loginUrl.trim(), fields: Object.fromEntries(secrets.map(([name, secret]) => [name, { secret }])) };
    // A login runs once per session: one session at least.
    body.sessions = 1;
  } else if (secrets.length) throw new CrawlOptionsError('Login fields need a login page');
  if (form.actions.trim()) {
    let actions: unknown;
    try {
      actions = JSON.parse(form.actions);
    } catch (err) {
      throw new CrawlOptionsError(`Actions: not JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(actions)) throw new CrawlOptionsError('Actions: a JSON list, such as [{"type": "click", "selector": "#accept"}]');
    body.actions = actions as CrawlOptionsBody['actions'];
  }
  const include = lines(form.include);
  if (include.length) body.include_patterns = include;
  const exclude = lines(form.exclude);
  if (exclude.length) body.exclude_patterns = exclude;
  if (form.scope === 'same_host' || form.scope === 'same_domain' || form.scope === 'any') body.scope = form.scope;
  if (form.followNofollow) body.follow_nofollow = true;
  return body;
}
