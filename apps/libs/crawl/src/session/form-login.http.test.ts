/**
 * A login form that submits with GET is refused before anything is sent: its credentials would
 * travel in the URL, which fetch errors, logs and the site's access log carry.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LoginFailedError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { logIn } from './form-login.ts';
import { SessionJar } from './session-jar.ts';
import { testSpec } from '../rules/test-spec.ts';

let site: LocalServer;
const seen: string[] = [];

beforeAll(async () => {
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.url!);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<form action="/enter" method="get"><input name="user"><input type="password" name="pw"></form>');
  };
  site = await startLocalServer({ '/login': answer, '/enter': answer });
});
afterAll(() => site.close());

it('refuses a GET login form: LOGIN_FAILED, and no request carries the credentials', async () => {
  const http = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), totalTimeoutMs: 10_000 });
  const login = { kind: 'form' as const, url: `${site.origin}/login`, form_selector: null, fields: { user: 'ada', pw: 'hunter2' }, actions: [], success_selector: '.member', success_url_pattern: null, failure_text: null };
  const jar = SessionJar.fromSpec(testSpec());
  const err = await logIn(login, jar.profile(null), { http }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LoginFailedError);
  expect((err as Error).message).toContain('GET');
  expect((err as Error).message).not.toContain('hunter2');
  expect(seen).toEqual(['/login']);
});
