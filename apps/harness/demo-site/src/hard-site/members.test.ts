import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, type HardSite } from './index.ts';
import { expectedMembers, membersRecord } from './members.ts';

let site: HardSite;
beforeAll(async () => {
  site = await createHardSite();
});
afterAll(async () => {
  await site?.close();
});

const UA = { 'user-agent': `${expectedMembers.userAgentToken}/1.0` };
const get = (path: string, cookie = '', headers: Record<string, string> = UA) => fetch(`${site.origin}${path}`, { headers: { ...headers, cookie }, redirect: 'manual' });
const setCookie = (r: Response) => r.headers.getSetCookie().map((c) => c.split(';')[0]!);

async function logIn(password: string): Promise<{ status: number; cookies: string }> {
  let cookies = setCookie(await get(expectedMembers.loginUrl)).join('; ');
  const page = await get('/members/login', cookies);
  cookies = [cookies, ...setCookie(page)].join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const r = await fetch(`${site.origin}/members/login`, { method: 'POST', redirect: 'manual', headers: { ...UA, cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf, username: expectedMembers.username, password }).toString() });
  return { status: r.status, cookies: [cookies, ...setCookie(r)].join('; ') };
}

describe('the members area', () => {
  it('answers a consent wall, then a login redirect, then the member page with the session', async () => {
    expect(await (await get('/members/page/1')).text()).toContain('Before you continue');
    expect((await get('/members/page/1', 'consent=yes')).status).toBe(302);
    const { status, cookies } = await logIn(expectedMembers.password);
    expect(status).toBe(302);
    const page = await (await get('/members/page/1', cookies)).text();
    expect(page.match(/class="member-item"/g)).toHaveLength(5);
    const record = membersRecord(site.origin);
    expect(record.logins).toHaveLength(1);
    expect(record.requests.at(-1)).toMatchObject({ path: '/members/page/1', valid: true, sid: record.logins[0] });
  });

  it('refuses a login without the CSRF cookie, a wrong password, and an unknown client', async () => {
    const { status, cookies } = await logIn('wrong');
    expect(status).toBe(200);
    expect((await get('/members/page/1', cookies)).status).toBe(302);
    const noPre = await fetch(`${site.origin}/members/login`, { method: 'POST', headers: { ...UA, cookie: 'consent=yes', 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x&username=ada&password=y' });
    expect(noPre.status).toBe(403);
    expect((await get('/members/', 'consent=yes', { 'user-agent': 'curl/8' })).status).toBe(403);
    expect(membersRecord(site.origin).failedLogins).toBe(2);
  });
});

describe('the members area with a per-session page limit', () => {
  it('answers the captcha past the limit, per session; a fresh login gets pages again', async () => {
    const limited = await createHardSite({ membersPageLimit: 2 });
    try {
      const getOn = (path: string, cookie: string) => fetch(`${limited.origin}${path}`, { headers: { ...UA, cookie }, redirect: 'manual' });
      const login = async () => {
        let cookies = setCookie(await getOn(expectedMembers.loginUrl, '')).join('; ');
        const page = await getOn('/members/login', cookies);
        cookies = [cookies, ...setCookie(page)].join('; ');
        const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
        const r = await fetch(`${limited.origin}/members/login`, { method: 'POST', redirect: 'manual', headers: { ...UA, cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf, username: expectedMembers.username, password: expectedMembers.password }).toString() });
        return [cookies, ...setCookie(r)].join('; ');
      };
      const first = await login();
      expect(await (await getOn('/members/page/1', first)).text()).toContain('member-item');
      expect(await (await getOn('/members/page/2', first)).text()).toContain('member-item');
      const third = await getOn('/members/page/3', first);
      expect(third.status).toBe(200);
      expect(await third.text()).toContain('Verify you are human');
      const second = await login();
      expect(await (await getOn('/members/page/3', second)).text()).toContain('member-item');
      const record = membersRecord(limited.origin);
      expect(record.captchas).toBe(1);
      expect(record.requests.every((r) => !r.proxied)).toBe(true);
    } finally {
      await limited.close();
    }
  });
});
