import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile } from '@trawl/streams';
import { CREDENTIAL_KEYS, credentialsFile, loadCredentials, secretsEnv } from '../src/credentials.ts';
import { writeStackEnv } from '../src/env-file.ts';
import { methodFor, scramMatches, scramVerifier, type HbaRule } from '../src/postgres-access.ts';
import { formatStatusTable, formatUpStep } from '../src/report.ts';
import { PartStartError } from '../src/errors.ts';

const mode = (file: string) => statSync(file).mode & 0o777;

describe('the stack’s credentials', () => {
  it('are generated once, kept, and readable by their owner only', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-creds-'));
    const first = loadCredentials(home, {});
    expect(Object.keys(first).sort()).toEqual([...CREDENTIAL_KEYS].sort());
    for (const [k, v] of Object.entries(first)) {
      if (k === 'TRAWL_SECRETS_KEY') expect(Buffer.from(v, 'base64')).toHaveLength(32);
      else expect(v).toMatch(/^[A-Za-z0-9_-]{32}$/);
    }
    expect(new Set(Object.values(first)).size).toBe(CREDENTIAL_KEYS.length);
    expect(mode(credentialsFile(home))).toBe(0o600);
    expect(loadCredentials(home, {})).toEqual(first);
  });

  it('take a password from the environment without storing it, and refuse one that would need escaping', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-creds-'));
    const creds = loadCredentials(home, { TRAWL_POSTGRES_PASSWORD: 'ci-chosen-password' });
    expect(creds.TRAWL_POSTGRES_PASSWORD).toBe('ci-chosen-password');
    expect(parseEnvFile(readFileSync(credentialsFile(home), 'utf8')).TRAWL_POSTGRES_PASSWORD).toBeUndefined();
    expect(() => loadCredentials(home, { TRAWL_REGISTRY_PASSWORD: 'a b@c:d/e' })).toThrow(/TRAWL_REGISTRY_PASSWORD must be/);
  });

  it('include the key of secrets at rest, handed to services with the old keys an operator lists for a rotation', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-creds-'));
    const creds = loadCredentials(home, {});
    expect(secretsEnv(home, creds, {})).toEqual({ TRAWL_SECRETS_KEY: creds.TRAWL_SECRETS_KEY, TRAWL_SECRETS_OLD_KEYS: undefined });
    // A rotation: the old key moves to TRAWL_SECRETS_OLD_KEYS, the next `up` generates a new one.
    const text = readFileSync(credentialsFile(home), 'utf8').replace(/^TRAWL_SECRETS_KEY=.*$/m, `TRAWL_SECRETS_OLD_KEYS=${creds.TRAWL_SECRETS_KEY}`);
    writeFileSync(credentialsFile(home), text);
    const rotated = loadCredentials(home, {});
    expect(rotated.TRAWL_SECRETS_KEY).not.toBe(creds.TRAWL_SECRETS_KEY);
    expect(rotated.TRAWL_POSTGRES_PASSWORD).toBe(creds.TRAWL_POSTGRES_PASSWORD);
    expect(secretsEnv(home, rotated, {})).toEqual({ TRAWL_SECRETS_KEY: rotated.TRAWL_SECRETS_KEY, TRAWL_SECRETS_OLD_KEYS: creds.TRAWL_SECRETS_KEY });
    // A key chosen in the environment comes with the environment's old keys only.
    const ci = Buffer.alloc(32, 1).toString('base64');
    expect(secretsEnv(home, loadCredentials(home, { TRAWL_SECRETS_KEY: ci }), { TRAWL_SECRETS_KEY: ci })).toEqual({ TRAWL_SECRETS_KEY: ci, TRAWL_SECRETS_OLD_KEYS: undefined });
    expect(() => loadCredentials(home, { TRAWL_SECRETS_KEY: 'too-short-a-key' })).toThrow(/TRAWL_SECRETS_KEY must be 32 random bytes in base64/);
  });

  it('bring an older, world-readable stack.env to 0600 and write new ones so', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-creds-'));
    const file = join(home, 'stack.env');
    writeFileSync(file, 'KAFKA_BROKERS=127.0.0.1:19092\n', { mode: 0o644 });
    writeStackEnv(file, { KAFKA_BROKERS: '127.0.0.1:19092' });
    expect(mode(file)).toBe(0o600);
    writeStackEnv(file, { DATABASE_URL: 'postgres://trawl:pw@127.0.0.1:5433/trawl' });
    expect(mode(file)).toBe(0o600);
  });
});

describe('Postgres passwords as SCRAM verifiers', () => {
  it('compute the verifier Postgres stores, and recognise it', () => {
    // What Postgres 15 stored for CREATE ROLE … PASSWORD 'pencil' (SELECT rolpassword FROM pg_authid).
    const stored = 'SCRAM-SHA-256$4096:zh0/Xg85qeYpew8i+qdS5g==$8qPo0MpR2IYC63AdAOSWWeCleECVLGuSzsK+hcfbVtE=:AXrHOLpEJW48dP3Bp1ZtYcTzOj1RAmUTw2Qti2YKMSM=';
    expect(scramVerifier('pencil', Buffer.from('zh0/Xg85qeYpew8i+qdS5g==', 'base64'), 4096)).toBe(stored);
    expect(scramMatches(stored, 'pencil')).toBe(true);
    expect(scramMatches(stored, 'pencil2')).toBe(false);
    expect(scramMatches('md5abcdef', 'pencil')).toBe(false);
    expect(scramMatches(null, 'pencil')).toBe(false);
    expect(scramVerifier('pencil')).not.toBe(scramVerifier('pencil')); // a fresh salt each time
  });
});

describe('what a server’s pg_hba.conf decides for 127.0.0.1', () => {
  const rule = (over: Partial<HbaRule>): HbaRule => ({ type: 'host', database: ['all'], user_name: ['all'], address: '127.0.0.1', netmask: '255.255.255.255', auth_method: 'scram-sha-256', ...over });

  it('is the method of the first matching line, as Postgres reads them', () => {
    expect(methodFor([rule({ type: 'local', address: null, auth_method: 'peer' }), rule({ auth_method: 'trust' }), rule({})], 'trawl', 'trawl')).toBe('trust');
    expect(methodFor([rule({ user_name: ['postgres'], auth_method: 'trust' }), rule({ auth_method: 'md5' })], 'trawl', 'trawl')).toBe('md5');
    expect(methodFor([rule({ address: '10.0.0.0', netmask: '255.0.0.0', auth_method: 'trust' }), rule({ address: '127.0.0.0', netmask: '255.0.0.0' })], 'trawl', 'trawl')).toBe('scram-sha-256');
    expect(methodFor([rule({ address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' })], 'trawl', 'trawl')).toBeUndefined();
  });
});

describe('reports', () => {
  it('never show a password, whatever a part puts in its endpoint, note or error', () => {
    const up = formatUpStep({ part: 'postgres', ok: true, ms: 10, up: { part: 'postgres', action: 'started', endpoint: 'postgres://trawl:Sekr3t-pw@127.0.0.1:5433/trawl', note: 'via postgres://trawl:Sekr3t-pw@127.0.0.1:5433/x' } });
    const failed = formatUpStep({ part: 'registry', ok: false, ms: 10, error: new PartStartError('registry', 'GET http://trawl:Sekr3t-pw@127.0.0.1:8081/ failed', 'check http://trawl:Sekr3t-pw@h/', { logTail: 'url=http://a:Sekr3t-pw@h/' }) });
    const table = formatStatusTable([{ part: 'clickhouse', state: 'up', ours: true, endpoint: 'http://trawl:Sekr3t-pw@127.0.0.1:8123', note: 'ok' }]);
    for (const text of [up, failed, table]) {
      expect(text).not.toContain('Sekr3t-pw');
      expect(text).toContain(':***@');
    }
  });
});
