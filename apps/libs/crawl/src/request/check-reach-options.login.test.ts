import { describe, expect, it } from 'vitest';
import { checkReachOptions, type ReachOptionsInput } from './check-reach-options.ts';

const login = { kind: 'form' as const, url: 'https://site.example/login', form_selector: null, fields: { user: 'ada', pass: { secret: 'site-pass' } }, actions: [], success_selector: '.member', success_url_pattern: null, failure_text: null };
const check = (options: ReachOptionsInput) => checkReachOptions(options, { prefix: 'request.' });

describe('a login, as configured', () => {
  it('is accepted with sessions, fields and a success rule', () => {
    expect(check({ sessions: 2, login })).toBeNull();
    expect(check({ sessions: 1, login: { ...login, form_selector: 'form#login', success_url_pattern: '^https://site\\.example/account' } })).toBeNull();
  });

  it('is refused without sessions, fields or a success rule', () => {
    expect(check({ sessions: 0, login })).toMatchObject({ code: 'LOGIN_NEEDS_SESSIONS', field: 'request.sessions' });
    expect(check({ sessions: 1, login: { ...login, fields: {} } })).toMatchObject({ code: 'INVALID_LOGIN', field: 'request.login.fields' });
    expect(check({ sessions: 1, login: { ...login, success_selector: null } })).toMatchObject({ code: 'INVALID_LOGIN', field: 'request.login' });
  });

  it('is refused with a selector or a success pattern that may not run', () => {
    expect(check({ sessions: 1, login: { ...login, form_selector: 'form[' } })).toMatchObject({ code: 'INVALID_LOGIN', field: 'request.login.form_selector' });
    expect(check({ sessions: 1, login: { ...login, success_selector: 'div ~ p ~ span' } })).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'request.login.success_selector' });
    expect(check({ sessions: 1, login: { ...login, success_url_pattern: '(a)\\1' } })).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'request.login.success_url_pattern' });
    expect(check({ sessions: 1, login: { ...login, success_url_pattern: '(' } })).toMatchObject({ code: 'INVALID_LOGIN', field: 'request.login.success_url_pattern' });
  });
});
