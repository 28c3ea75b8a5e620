import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSecretsKey, isSealed, parseSecretsKey, SecretBox, sealedKeyId, SecretsConfigError, SecretUnreadableError } from './secret-box.ts';
import { secretBoxFromEnv } from './secrets-config.ts';

const key = (text: string) => parseSecretsKey(text, 'TEST_KEY');
const a = key(generateSecretsKey());
const b = key(generateSecretsKey());
const secret = 'whsec-a-secret-of-24-characters';

describe('SecretBox', () => {
  it('seals a secret so that its text is nowhere in the stored value, and opens it again in the same context', () => {
    const box = new SecretBox(a);
    const sealed = box.seal(secret, 'webhooks.secret:1');
    expect(isSealed(sealed)).toBe(true);
    // A clear secret a user happened to begin with the prefix is not taken for sealed.
    expect(isSealed('tsec1.my-own-secret-value')).toBe(false);
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain(Buffer.from(secret).toString('base64'));
    expect(sealedKeyId(sealed)).toBe(box.currentKeyId);
    expect(box.open(sealed, 'webhooks.secret:1')).toBe(secret);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal(secret, 'webhooks.secret:1')).not.toBe(sealed);
  });

  it('refuses a value copied to another context, altered, sealed under an unknown key, or not sealed', () => {
    const box = new SecretBox(a);
    const sealed = box.seal(secret, 'webhooks.secret:1');
    expect(() => box.open(sealed, 'webhooks.secret:2')).toThrow(SecretUnreadableError);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x'.repeat(secret.length)).toString('base64url');
    expect(() => box.open(parts.join('.'), 'webhooks.secret:1')).toThrow(/altered, or copied/);
    expect(() => new SecretBox(b).open(sealed, 'webhooks.secret:1')).toThrow(new RegExp(`sealed under key ${box.currentKeyId}, which is neither TRAWL_SECRETS_KEY`));
    expect(() => box.open(secret, 'webhooks.secret:1')).toThrow(/is not sealed/);
  });

  it('rotates: the new key seals, an old key still opens what it sealed', () => {
    const before = new SecretBox(a).seal(secret, 'c');
    const rotated = new SecretBox(b, [a]);
    expect(rotated.keyIds).toEqual([rotated.currentKeyId, new SecretBox(a).currentKeyId]);
    expect(rotated.open(before, 'c')).toBe(secret);
    expect(rotated.isCurrent(before)).toBe(false);
    const after = rotated.seal(secret, 'c');
    expect(rotated.isCurrent(after)).toBe(true);
    expect(() => new SecretBox(a).open(after, 'c')).toThrow(SecretUnreadableError);
  });

  it('takes a key as base64 or base64url of 32 bytes and nothing else', () => {
    const raw = Buffer.alloc(32, 7);
    expect(parseSecretsKey(raw.toString('base64'), 'K').equals(raw)).toBe(true);
    expect(parseSecretsKey(raw.toString('base64url'), 'K').equals(raw)).toBe(true);
    for (const bad of ['', 'short', Buffer.alloc(16).toString('base64'), Buffer.alloc(33).toString('base64'), 'not base64 at all!!']) {
      expect(() => parseSecretsKey(bad, 'TRAWL_SECRETS_KEY')).toThrow(/TRAWL_SECRETS_KEY must be 32 random bytes in base64/);
    }
  });
});

describe('secretBoxFromEnv', () => {
  const home = mkdtempSync(join(tmpdir(), 'trawl-secrets-'));

  it('refuses to go on without a key, saying which variable and how to make one', () => {
    const err = (() => {
      try {
        secretBoxFromEnv({ TRAWL_HOME: home }, 'the API');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SecretsConfigError);
    expect((err as Error).message).toMatch(/TRAWL_SECRETS_KEY is not set: the API keeps webhook secrets encrypted/);
    expect((err as Error).message).toMatch(/openssl rand -base64 32/);
  });

  it('reads the key and old keys from the environment, else from stack.env, never one from each', () => {
    const stackKey = generateSecretsKey();
    const stackOld = generateSecretsKey();
    writeFileSync(join(home, 'stack.env'), `TRAWL_SECRETS_KEY=${stackKey}\nTRAWL_SECRETS_OLD_KEYS=${stackOld}\n`);
    const fromFile = secretBoxFromEnv({ TRAWL_HOME: home });
    expect(fromFile.keyIds).toEqual([new SecretBox(key(stackKey)).currentKeyId, new SecretBox(key(stackOld)).currentKeyId]);
    const envKey = generateSecretsKey();
    const fromEnv = secretBoxFromEnv({ TRAWL_HOME: home, TRAWL_SECRETS_KEY: envKey });
    expect(fromEnv.keyIds).toEqual([new SecretBox(key(envKey)).currentKeyId]);
    expect(() => secretBoxFromEnv({ TRAWL_HOME: home, TRAWL_SECRETS_KEY: envKey, TRAWL_SECRETS_OLD_KEYS: 'nope' })).toThrow(/TRAWL_SECRETS_OLD_KEYS \(entry 1\) must be 32 random bytes/);
  });
});
