/**
 * A browser login (CrawlSpec.login, kind `browser`): the login page rendered with the session's
 * profile and the login's actions run on it (the action runner, fetch/browser-actions.ts, which
 * opens a sealed `type` text itself). The render runs in a context of its own that starts with the
 * session's cookies and hands back what the site set (RequestProfile.receiveBrowserCookies), so
 * the session's jar holds the login's cookies for every later page, HTTP or browser.
 */
import type { LoginSpec } from '@trawl/schemas';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { BrowserWork } from '../fetch/browser-work.ts';
import type { RequestProfile } from '../request/request-profile.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import type { BrowserLogin } from './form-login.ts';

/** What a browser login needs of the browser fetcher. */
export interface LoginBrowser {
  fetch(url: string, options: { signal?: AbortSignal; request?: RequestProfile | null; work?: BrowserWork | null; proxy?: ProxyEndpoint | null }): Promise<FetchResult>;
}

export function browserLogin(browser: LoginBrowser): BrowserLogin {
  return async (login: LoginSpec, profile, options) => {
    const work: BrowserWork = { actions: login.actions, expand: null, capture: { screenshot: false, pdf: false } };
    const page = await browser.fetch(login.url, { ...(options.signal ? { signal: options.signal } : {}), ...(options.proxy ? { proxy: options.proxy } : {}), request: profile, work });
    return { finalUrl: page.finalUrl, status: page.status, body: page.body, cookies: [] };
  };
}
