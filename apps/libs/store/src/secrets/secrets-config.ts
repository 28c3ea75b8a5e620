/**
 * The secrets' keys from configuration: `TRAWL_SECRETS_KEY` (base64 of 32 bytes; seals and opens)
 * and `TRAWL_SECRETS_OLD_KEYS` (comma-separated, open only: keys being rotated out). Each from the
 * environment, else from TRAWL_HOME/stack.env, where the local stack writes the key it generated
 * (as it writes the endpoints' credentials there). No default: a service that keeps secrets and
 * has no key refuses to start rather than keep them in clear.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnvFile, stackEnvFile } from '@trawl/base';
import { parseSecretsKey, SecretBox, SecretsConfigError } from './secret-box.ts';

export const SECRETS_KEY_VARIABLE = 'TRAWL_SECRETS_KEY';
export const SECRETS_OLD_KEYS_VARIABLE = 'TRAWL_SECRETS_OLD_KEYS';

/**
 * The box of the configured keys. SecretsConfigError, naming the variable and what to do, when
 * the key is missing or a key is malformed. `who` names the service for the message.
 */
export function secretBoxFromEnv(env: NodeJS.ProcessEnv = process.env, who = 'this service'): SecretBox {
  const file = stackEnvFile(env);
  const stack = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  // The current and the old keys come from the same place, so that a key set in the environment
  // is never paired with old keys the stack wrote for another one (and the other way round).
  const fromEnv = Boolean(env[SECRETS_KEY_VARIABLE]);
  const current = fromEnv ? env[SECRETS_KEY_VARIABLE] : stack[SECRETS_KEY_VARIABLE];
  const old = (fromEnv ? env[SECRETS_OLD_KEYS_VARIABLE] : stack[SECRETS_OLD_KEYS_VARIABLE]) ?? '';
  if (!current) {
    throw new SecretsConfigError(
      `${SECRETS_KEY_VARIABLE} is not set: ${who} keeps webhook secrets encrypted with it and does not start without it. ` +
        `Run \`npm run stack -- up\` (it generates one into ${file}), or set ${SECRETS_KEY_VARIABLE} to 32 random bytes in base64 (\`openssl rand -base64 32\`) — the same value for the API and the webhooks service`,
    );
  }
  const olds = old.split(',').map((s) => s.trim()).filter(Boolean).map((k, i) => parseSecretsKey(k, `${SECRETS_OLD_KEYS_VARIABLE} (entry ${i + 1})`));
  return new SecretBox(parseSecretsKey(current, SECRETS_KEY_VARIABLE), olds);
}
