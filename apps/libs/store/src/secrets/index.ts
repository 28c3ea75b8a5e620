/** `@trawl/store/secrets`: secrets at rest (README: Secrets at rest). */
export { generateSecretsKey, isSealed, keyIdOf, parseSecretsKey, SecretBox, sealedKeyId, SECRETS_KEY_BYTES, SecretsConfigError, SecretUnreadableError } from './secret-box.ts';
export { SECRETS_KEY_VARIABLE, SECRETS_OLD_KEYS_VARIABLE, secretBoxFromEnv } from './secrets-config.ts';
export { openWebhookSecret, resealWebhookSecrets, sealWebhookSecret, webhookSecretContext, webhookSecretKeys, type ResealReport } from './webhook-secrets.ts';
