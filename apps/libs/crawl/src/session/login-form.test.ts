import { describe, expect, it } from 'vitest';
import { LoginFailedError } from '../errors.ts';
import { findLoginForm, formBody } from './login-form.ts';

const PAGE = `<!doctype html><title>Sign in</title>
<form id="search" action="/search" method="get"><input name="q" value="x"></form>
<form id="login" action="session/new" method="POST">
  <input type="hidden" name="csrf" value="tok-123">
  <input type="text" name="username">
  <input type="password" name="password">
  <input type="checkbox" name="remember" value="1" checked>
  <input type="checkbox" name="newsletter" value="1">
  <input type="text" name="disabled" value="no" disabled>
  <select name="lang"><option value="en">English</option><option value="fr" selected>Français</option></select>
  <button type="submit" name="go">Sign in</button>
</form>`;

describe('the login form', () => {
  it('is the form with a password field, its hidden CSRF token and checked boxes carried, its action resolved against the page', () => {
    const form = findLoginForm(PAGE, 'http://site.example/account/login', null);
    expect(form.action).toBe('http://site.example/account/session/new');
    expect(form.method).toBe('post');
    expect(form.fields).toEqual([['csrf', 'tok-123'], ['username', ''], ['password', ''], ['remember', '1'], ['lang', 'fr']]);
  });

  it('is the one form_selector names', () => {
    const form = findLoginForm(PAGE, 'http://site.example/login', 'form#search');
    expect(form).toMatchObject({ action: 'http://site.example/search', method: 'get', fields: [['q', 'x']] });
  });

  it('posts to the page itself without an action', () => {
    expect(findLoginForm('<form><input type="password" name="p"></form>', 'http://site.example/login?x=1', null).action).toBe('http://site.example/login?x=1');
  });

  it('is missing, and the login fails saying so, when no form has a password field', () => {
    expect(() => findLoginForm('<form id="a"></form><form id="b"></form>', 'http://site.example/', null)).toThrow(LoginFailedError);
    expect(() => findLoginForm('<p>nothing</p>', 'http://site.example/', 'form.login')).toThrow(/no form matching form.login/);
  });

  it('sends its own fields with the credentials filled over them', () => {
    const form = findLoginForm(PAGE, 'http://site.example/login', null);
    const body = new URLSearchParams(formBody(form, { username: 'ada', password: 'p&ss w=rd' }));
    expect([...body]).toEqual([['csrf', 'tok-123'], ['remember', '1'], ['lang', 'fr'], ['username', 'ada'], ['password', 'p&ss w=rd']]);
  });
});
