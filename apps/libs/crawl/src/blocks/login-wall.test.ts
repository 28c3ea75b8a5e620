import { describe, expect, it } from 'vitest';
import { loginWallOf, namesLogin, type LoginWallInput } from './login-wall.ts';

const FORM = '<!doctype html><title>Sign in</title><form method="post"><input name="user"><input name="pass" type="password"><button>Sign in</button></form>';
const wall = (over: Partial<LoginWallInput> = {}): LoginWallInput => ({
  status: 200, isHtml: true, text: FORM, url: 'https://shop.test/account/orders', finalUrl: 'https://shop.test/users/sign_in?return_to=%2Faccount%2Forders', ...over,
});

describe('loginWallOf', () => {
  it('takes a redirect to a login form at a login URL for a wall, saying from where to where', () => {
    expect(loginWallOf(wall())).toBe('https://shop.test/account/orders redirected to a login form (https://shop.test/users/sign_in?return_to=%2Faccount%2Forders)');
    for (const to of ['https://shop.test/login', 'https://shop.test/members/login?next=/members/', 'https://sso.test/auth/realms/x', 'https://shop.test/session/new', 'https://shop.test/wp-login.php', 'https://shop.test/Log-In']) {
      expect(loginWallOf(wall({ finalUrl: to })), to).not.toBeNull();
    }
    expect(loginWallOf(wall({ text: "<form><input type='password' name=p></form>" }))).not.toBeNull();
    expect(loginWallOf(wall({ text: '<input name=p type=PASSWORD/>' }))).not.toBeNull();
  });

  it('takes a 401 for a wall, even without a body or URLs', () => {
    expect(loginWallOf(wall({ status: 401, text: '', finalUrl: null }))).toBe('https://shop.test/account/orders answered HTTP 401');
    expect(loginWallOf({ status: 401, isHtml: false, text: '', url: null, finalUrl: null })).toBe('the page answered HTTP 401');
  });

  it('leaves alone a page with a login box that was not redirected, or moved without leaving its path', () => {
    // A login box in every header: the page asked for, as it is.
    expect(loginWallOf(wall({ finalUrl: 'https://shop.test/account/orders' }))).toBeNull();
    // http to https, a slash added: the same page.
    expect(loginWallOf(wall({ url: 'http://shop.test/login-help/', finalUrl: 'https://shop.test/login-help' }))).toBeNull();
    // Moved to its slug on a site whose header holds a login box: the target names no login.
    expect(loginWallOf(wall({ url: 'https://forum.test/t/123', finalUrl: 'https://forum.test/t/123-how-to-log' }))).toBeNull();
    // Redirected to a login URL but no password field: a consent page, an SSO chooser — not this rule.
    expect(loginWallOf(wall({ text: '<form><input name="email"></form>' }))).toBeNull();
    expect(loginWallOf(wall({ isHtml: false }))).toBeNull();
    expect(loginWallOf(wall({ status: 403 }))).toBeNull();
  });

  it('never takes a login or logout page the crawl asked for for a wall', () => {
    for (const url of ['https://shop.test/login', 'https://shop.test/members/consent?next=/members/login', 'https://shop.test/users/sign_in', 'https://shop.test/logout', 'https://shop.test/auth/start']) {
      expect(loginWallOf(wall({ url })), url).toBeNull();
      expect(loginWallOf(wall({ url, status: 401 })), url).toBeNull();
    }
  });
});

describe('namesLogin', () => {
  it('finds login and logout words as sites spell them, not inside other words', () => {
    for (const u of ['https://a.test/login', 'https://a.test/x?next=/signin', 'https://a.test/user/log_in', 'https://a.test/oauth2/authorize', 'https://a.test/sign-out']) expect(namesLogin(u), u).toBe(true);
    for (const u of ['https://a.test/author/jane', 'https://a.test/blog/logging-in-production', 'https://a.test/casual', 'not a url']) expect(namesLogin(u), u).toBe(false);
  });
});
