/** `@trawl/store/secrets`: secrets at rest (README: Secrets at rest). */
export { generateSecretsKey, isSealed, keyIdOf, parseSecretsKey, SecretBox, sealedKeyId, SECRETS_KEY_BYTES, SecretsConfigError, SecretUnreadableError } from './secret-box.ts';
export { SECRETS_KEY_VARIABLE, SECRETS_OLD_KEYS_VARIABLE, secretBoxFromEnv } from './secrets-config.ts';
export { openWebhookSecret, resealWebhookSecrets, sealWebhookSecret, webhookSecretContext, webhookSecretKeys, type ResealReport } from './webhook-secrets.ts';
export { DEFAULT_USER_SECRET_LIMITS, deleteUserSecret, listUserSecrets, putUserSecret, resealUserSecrets, resolveUserSecrets, SECRET_NAME_PATTERN, userSecretContext, userSecretLimitsFromEnv, userSecretLookup, type PutUserSecretResult, type UserSecretLimits, type UserSecretView } from './user-secrets.ts';
export { CREDENTIAL_CONTEXT, credentialFingerprint, mapCredentials, openCredential, REDACTED, redactCredentials, sealCredentials, sealForStorage, secretNames, UnknownSecretError, type CredentialFields, type CredentialInput, type SealedCredentials, type SealOptions, type SecretLookup } from './seal-credentials.ts';
export { resealStoredCredentials, type StoredCredentialsReport } from './reseal-stored-credentials.ts';
