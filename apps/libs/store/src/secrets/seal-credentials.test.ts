import { describe, expect, it } from 'vitest';
import { generateSecretsKey, isSealed, parseSecretsKey, SecretBox } from './secret-box.ts';
import { CREDENTIAL_CONTEXT, credentialFingerprint, openCredential, redactCredentials, sealCredentials, sealForStorage, secretNames, UnknownSecretError, type SecretLookup } from './seal-credentials.ts';

const box = new SecretBox(parseSecretsKey(generateSecretsKey(), 'K'));
const secrets = new Map([['api-token', 'Bearer tok-7f3a'], ['sid', 'sid=s3cr3t; Path=/'], ['pw', 'hunter2']]);
const asked: string[][] = [];
const lookup: SecretLookup = async (names) => {
  asked.push([...names]);
  return new Map([...secrets].filter(([n]) => names.includes(n)));
};

const request = {
  headers: { authorization: { secret: 'api-token' }, 'x-plain': 'literal-value' },
  user_agent: 'Bot/1',
  cookies: { 'shop.example': [{ secret: 'sid' }, 'consent=yes'] },
  proxies: [{ url: 'http://proxy.example:3128', username: 'alice', password: { secret: 'pw' } }],
  login: { kind: 'form', url: 'https://shop.example/login', fields: { user: 'alice', pass: { secret: 'pw' } }, actions: [{ type: 'type', selector: '#p', text: { secret: 'pw' } }] },
  actions: [{ type: 'click', selector: '#go', text: null }, { type: 'type', selector: '#q', text: 'query' }],
  depth: 2,
};

describe('sealCredentials', () => {
  it('seals every credential of a request — literals and named secrets — and gives the clear copy for checks', async () => {
    asked.length = 0;
    const { sealed, clear } = await sealCredentials(request, { box, lookup });
    // One lookup for all the names.
    expect(asked).toEqual([['api-token', 'sid', 'pw']]);
    const values = [sealed.headers.authorization, sealed.headers['x-plain'], ...sealed.cookies['shop.example'], sealed.proxies[0]!.username, sealed.proxies[0]!.password, sealed.login.fields.user, sealed.login.fields.pass, sealed.login.actions[0]!.text, sealed.actions[1]!.text];
    for (const v of values) expect(typeof v === 'string' && isSealed(v)).toBe(true);
    const text = JSON.stringify(sealed);
    for (const s of [...secrets.values(), 'literal-value', 'consent=yes', 'hunter2', 'query']) expect(text).not.toContain(s);
    // What is not a credential is left as it was.
    expect(sealed.user_agent).toBe('Bot/1');
    expect(sealed.depth).toBe(2);
    expect(sealed.actions[0]!.text).toBeNull();
    expect(sealed.proxies[0]!.url).toBe('http://proxy.example:3128');
    expect(openCredential(box, sealed.headers.authorization as unknown as string)).toBe('Bearer tok-7f3a');
    expect(clear.headers).toEqual({ authorization: 'Bearer tok-7f3a', 'x-plain': 'literal-value' });
    expect(clear.cookies).toEqual({ 'shop.example': ['sid=s3cr3t; Path=/', 'consent=yes'] });
    expect(clear.login.fields).toEqual({ user: 'alice', pass: 'hunter2' });
  });

  it('refuses a name the user has no secret of, saying where it was named', async () => {
    const err = await sealCredentials({ headers: { a: { secret: 'nope' } } }, { box, lookup }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownSecretError);
    expect(err).toMatchObject({ code: 'UNKNOWN_SECRET', secretName: 'nope', field: 'headers.a' });
    await expect(sealCredentials({ proxies: [{ url: 'x', password: { secret: 'x' } }] }, { box })).rejects.toMatchObject({ field: 'proxies.0.password' });
  });

  it('never takes a request literal for a sealed value: one that looks sealed is sealed again', async () => {
    const looksSealed = box.seal('victim-token', CREDENTIAL_CONTEXT);
    const { sealed } = await sealCredentials({ headers: { a: looksSealed } }, { box });
    expect(sealed.headers.a).not.toBe(looksSealed);
    expect(openCredential(box, sealed.headers.a)).toBe(looksSealed);
  });

  it('keeps a stored website: literals sealed once, references kept and resolved at each job', async () => {
    const { sealed: stored, clear } = await sealForStorage({ headers: { authorization: { secret: 'api-token' }, 'x-plain': 'literal-value' } }, { box, lookup });
    expect(stored.headers.authorization).toEqual({ secret: 'api-token' });
    expect(isSealed(stored.headers['x-plain'] as string)).toBe(true);
    expect(clear.headers).toEqual({ authorization: 'Bearer tok-7f3a', 'x-plain': 'literal-value' });
    expect(redactCredentials(stored).headers).toEqual({ authorization: { secret: 'api-token' }, 'x-plain': '[sealed]' });
    await expect(sealForStorage({ cookies: { a: [{ secret: 'gone' }] } }, { box, lookup })).rejects.toBeInstanceOf(UnknownSecretError);

    const job = await sealCredentials(stored, { box, lookup, from: 'stored' });
    // The stored sealed literal goes into the spec as it is; the reference is resolved now.
    expect(job.sealed.headers['x-plain']).toBe(stored.headers['x-plain']);
    expect(openCredential(box, job.sealed.headers.authorization as unknown as string)).toBe('Bearer tok-7f3a');
    expect(job.clear.headers).toEqual({ authorization: 'Bearer tok-7f3a', 'x-plain': 'literal-value' });
    // A clear value of a row written before sealing is sealed on its way into the spec.
    const legacy = await sealCredentials({ cookies: { a: ['sid=legacy'] } }, { box, from: 'stored' });
    expect(openCredential(box, legacy.sealed.cookies.a[0]!)).toBe('sid=legacy');
  });

  it('lists the names a request refers to', () => {
    expect([...secretNames(request).entries()]).toEqual([['api-token', 'headers.authorization'], ['sid', 'cookies.shop.example.0'], ['pw', 'proxies.0.password']]);
  });

  it('fingerprints with the key: stable for the same text, not a bare SHA-256, other under another key', () => {
    const f = credentialFingerprint(box);
    expect(f('sid=1')).toBe(f('sid=1'));
    expect(f('sid=1')).not.toBe(f('sid=2'));
    expect(f('sid=1')).not.toBe(credentialFingerprint(new SecretBox(parseSecretsKey(generateSecretsKey(), 'K')))('sid=1'));
  });
});
