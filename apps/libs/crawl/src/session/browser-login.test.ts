/**
 * A browser login in the worker's Chromium, against the hard site's members' area: the login's
 * actions type the credentials (the password sealed) and submit the form; what the site sets
 * comes back into the session's jar, and the session's next HTTP page is a member's page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, expectedMembers, membersRecord, type HardSite } from '@trawl/demo-site';
import type { BrowserAction, CrawlSpec } from '@trawl/schemas';
import { BrowserFetcher } from '../fetch/browser-fetcher.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { requestProfileOf } from '../request/request-profile.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { browserLogin } from './browser-login.ts';
import { SessionPool, type SessionState, type SessionStore } from './session-pool.ts';

const SEALED = 'tsec1.k1.sealed-password';
const open = (sealed: string) => (sealed === SEALED ? expectedMembers.password : sealed);

let site: HardSite;
let browser: BrowserFetcher;
let http: HttpFetcher;

beforeAll(async () => {
  site = await createHardSite();
  const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
  browser = await BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 10_000, open });
  http = new HttpFetcher({ policy, totalTimeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await site?.close();
});

const action = (a: Partial<BrowserAction> & Pick<BrowserAction, 'type'>): BrowserAction => ({ selector: null, text: null, key: null, ms: null, times: null, full_page: false, ...a });

function spec(password: string): CrawlSpec {
  return testSpec({
    sessions: 1,
    user_agent: `${expectedMembers.userAgentToken}/1.0`,
    login: {
      kind: 'browser',
      url: `${site.origin}${expectedMembers.loginUrl}`,
      form_selector: null,
      fields: {},
      actions: [
        action({ type: 'type', selector: 'form#login input[name=username]', text: expectedMembers.username }),
        action({ type: 'type', selector: 'form#login input[name=password]', text: password }),
        action({ type: 'click', selector: 'form#login button[type=submit]' }),
        action({ type: 'wait_for', selector: '.member, .error' }),
      ],
      success_selector: expectedMembers.successSelector,
      success_url_pattern: null,
      failure_text: expectedMembers.failureText,
    },
  });
}

class MemoryStore implements SessionStore {
  readonly saves: SessionState[] = [];
  async load(): Promise<SessionState | undefined> {
    return this.saves.at(-1);
  }
  async save(state: SessionState): Promise<void> {
    this.saves.push(state);
  }
}

describe('a browser login', () => {
  it("runs the actions in Chromium and keeps the site's cookies in the session's jar", async () => {
    const s = spec(SEALED);
    const store = new MemoryStore();
    const pool = new SessionPool({ store, http, browser: browserLogin(browser) });
    const lease = (await pool.lease({ job_id: 'b0000000-0000-4000-8000-000000000001', url: `${site.origin}/members/page/1`, event_id: 'e1' }, s, requestProfileOf(s)))!;
    expect(store.saves.map((x) => [x.login, x.reason])).toEqual([['done', 'login']]);
    const record = membersRecord(site.origin);
    expect(record.logins).toHaveLength(1);
    const page = await http.fetch(`${site.origin}/members/page/1`, { request: lease.profile });
    expect(page.status).toBe(200);
    expect(page.body).toContain('Member item 1');
    expect(record.requests.at(-1)).toMatchObject({ path: '/members/page/1', valid: true, sid: record.logins[0] });
  }, 60_000);

  it('fails LOGIN_FAILED with the wrong password', async () => {
    const pool = new SessionPool({ store: new MemoryStore(), http, browser: browserLogin(browser) });
    const s = spec('wrong');
    await expect(pool.lease({ job_id: 'b0000000-0000-4000-8000-000000000002', url: `${site.origin}/members/page/1`, event_id: 'e1' }, s, requestProfileOf(s))).rejects.toThrow(/browser login at .*: the page after the login shows the failure text/);
  }, 60_000);
});
