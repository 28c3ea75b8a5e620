import { describe, expect, it } from 'vitest';
import { loginProblem } from './login-check.ts';

const none = { success_selector: null, success_url_pattern: null, failure_text: null };
const ok = { status: 200, finalUrl: 'http://site.example/members/', body: '<p>Welcome, <span class="member">ada</span></p>' };

describe('the login success rules', () => {
  it('holds when every rule given holds', () => {
    expect(loginProblem(ok, { success_selector: '.member', success_url_pattern: '/members/$', failure_text: 'Invalid' })).toBeNull();
  });

  it('fails on the failure text, a URL off the pattern, a missing element — saying which, never a value', () => {
    expect(loginProblem({ ...ok, body: '<p>Invalid username or password</p>' }, { ...none, failure_text: 'Invalid username' })).toMatch(/failure text/);
    expect(loginProblem({ ...ok, finalUrl: 'http://site.example/login?error=1' }, { ...none, success_url_pattern: '^http://site\\.example/members/' })).toMatch(/success pattern/);
    expect(loginProblem(ok, { ...none, success_selector: '.logout' })).toMatch(/success selector/);
  });

  it('fails on an error status', () => {
    expect(loginProblem({ ...ok, status: 403 }, none)).toBe('the login answered HTTP 403');
  });

  it('without rules, fails when the login form shows again', () => {
    expect(loginProblem(ok, none)).toBeNull();
    expect(loginProblem({ ...ok, body: '<form><input type="password" name="p"></form>' }, none)).toMatch(/password form again/);
  });
});
