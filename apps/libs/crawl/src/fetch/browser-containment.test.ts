import { describe, expect, it } from 'vitest';
import { asUserPrefix, browserEnv, planSandbox, planUser, type ContainmentFacts } from './browser-containment.ts';

const root = { name: 'root', uid: 0, gid: 0 };
const browserUser = { name: 'trawl-browser', uid: 999, gid: 995 };
const facts = (over: Partial<ContainmentFacts> = {}): ContainmentFacts => ({
  self: root,
  browserUserName: 'trawl-browser',
  browserUser,
  setpriv: '/usr/bin/setpriv',
  sandboxMode: 'auto',
  ...over,
});

describe('browser containment', () => {
  it('starts Chromium as the browser user through setpriv when the worker is root', () => {
    expect(planUser(facts())).toEqual({ runAs: browserUser, viaSetpriv: true });
    expect(asUserPrefix({ status: { state: 'on', user: 'trawl-browser', reason: null }, runAs: browserUser, setpriv: '/usr/bin/setpriv' })).toEqual([
      '--reuid=999',
      '--regid=995',
      '--clear-groups',
      '--no-new-privs',
      '--',
    ]);
  });

  it('runs Chromium as the worker itself when the worker is not root (only root can change users)', () => {
    const alice = { name: 'alice', uid: 1000, gid: 1000 };
    expect(planUser(facts({ self: alice, browserUser: null, setpriv: null }))).toEqual({ runAs: alice, viaSetpriv: false });
    expect(asUserPrefix({ status: { state: 'on', user: 'alice', reason: null }, runAs: alice, setpriv: null })).toEqual([]);
  });

  it('never runs Chromium as root: no browser user, a root browser user, or no setpriv means no browser, and says what to do', () => {
    expect(planUser(facts({ browserUser: null }))).toEqual({ unavailable: expect.stringMatching(/user "trawl-browser" does not exist: run scripts\/setup/) });
    expect(planUser(facts({ browserUserName: 'toor', browserUser: { name: 'toor', uid: 0, gid: 0 } }))).toEqual({ unavailable: expect.stringContaining('"toor" is root') });
    expect(planUser(facts({ setpriv: null }))).toEqual({ unavailable: expect.stringContaining('setpriv') });
    expect(planSandbox(planUser(facts({ browserUser: null })), null, 'auto')).toMatchObject({ state: 'unavailable', user: null });
  });

  it('turns the sandbox on where namespaces work, off with the reason and the remedy where not, or refuses when it is required', () => {
    const user = planUser(facts());
    expect(planSandbox(user, null, 'auto')).toEqual({ state: 'on', user: 'trawl-browser', reason: null });
    const off = planSandbox(user, 'unshare: unshare failed: Operation not permitted', 'auto');
    expect(off).toMatchObject({ state: 'off', user: 'trawl-browser' });
    expect(off.reason).toMatch(/without its sandbox: user "trawl-browser" cannot create the namespaces .*Operation not permitted.*unprivileged_userns_clone/);
    expect(planSandbox(user, 'unshare: unshare failed: Operation not permitted', 'required')).toMatchObject({ state: 'unavailable', reason: expect.stringContaining('TRAWL_BROWSER_SANDBOX=required') });
  });

  it('gives Chromium an environment of its own: its HOME in the profile, none of the worker’s variables', () => {
    const env = browserEnv('/tmp/trawl-chromium-x', { PATH: '/usr/bin', DATABASE_URL: 'postgres://u:secret@h/db', CLICKHOUSE_URL: 'http://u:p@h', TZ: 'UTC' });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/tmp/trawl-chromium-x', XDG_CONFIG_HOME: '/tmp/trawl-chromium-x/.config', XDG_CACHE_HOME: '/tmp/trawl-chromium-x/.cache', LANG: 'C.UTF-8', TZ: 'UTC' });
  });
});
