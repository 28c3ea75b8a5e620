import { describe, expect, it } from 'vitest';
import { requestProfileOf } from '../request/request-profile.ts';
import { testSpec } from '../rules/test-spec.ts';
import { JAR_LIMITS, SessionJar } from './session-jar.ts';

describe('a session jar', () => {
  it("starts from the spec's cookies and keeps what responses set, by domain and path (RFC 6265)", () => {
    const jar = SessionJar.fromSpec(testSpec({ cookies: { 'site.example': ['consent=yes; Path=/'] } }));
    expect(jar.changed).toBe(false);
    jar.receive('http://site.example/members/login', ['members_pre=p1; Path=/members; HttpOnly', 'theme=dark']);
    expect(jar.changed).toBe(true);
    expect(jar.cookieHeader('http://site.example/members/page/1')).toBe('members_pre=p1; theme=dark; consent=yes');
    // theme has no Path: its default path is the directory it was set from (/members).
    expect(jar.cookieHeader('http://site.example/about')).toBe('consent=yes');
    expect(jar.cookieHeader('http://other.example/')).toBe('');
  });

  it('ignores a cookie for another domain, as a browser does', () => {
    const jar = SessionJar.fromSpec(testSpec());
    jar.receive('http://site.example/', ['x=1; Domain=evil.example']);
    expect(jar.changed).toBe(false);
    expect(jar.cookieHeader('http://evil.example/')).toBe('');
  });

  it('survives its serialisation: a worker that takes the session over sends the same cookies', () => {
    const jar = SessionJar.fromSpec(testSpec());
    jar.receive('http://site.example/members/login', ['members_sid=s1; Path=/members; HttpOnly']);
    const copy = SessionJar.deserialize(jar.serialize());
    expect(copy.cookieHeader('http://site.example/members/')).toBe('members_sid=s1');
    expect(copy.changed).toBe(false);
  });

  it("gives a profile with the job's headers and the jar's cookies, taking each Set-Cookie", () => {
    const spec = testSpec({ user_agent: 'MembersBot/1', cookies: { 'site.example': ['consent=yes'] } });
    const jar = SessionJar.fromSpec(spec);
    const profile = jar.profile(requestProfileOf(spec));
    profile.receive!('http://site.example/', ['sid=abc']);
    expect(profile.headersFor('http://site.example/', 'http://site.example/')).toMatchObject({ 'user-agent': 'MembersBot/1', cookie: 'consent=yes; sid=abc' });
    expect(profile.browserCookies().map((c) => `${c.name}=${c.value}@${c.domain}`).sort()).toEqual(['consent=yes@site.example', 'sid=abc@site.example']);
  });

  it('stays within its limits: a site that sets cookie after cookie loses its oldest, and the jar still serialises small', () => {
    const jar = SessionJar.fromSpec(testSpec());
    for (let i = 0; i < JAR_LIMITS.maxCookies + 100; i++) jar.receive('http://site.example/', [`c${i}=${'v'.repeat(100)}`]);
    const names = jar.browserCookies().map((c) => c.name);
    expect(names.length).toBeLessThanOrEqual(JAR_LIMITS.maxCookies);
    expect(names).toContain(`c${JAR_LIMITS.maxCookies + 99}`);
    expect(names).not.toContain('c0');
    expect(jar.serialize().length).toBeLessThanOrEqual(JAR_LIMITS.maxBytes + 4096);
  });
});
