/**
 * What opens a job's sealed credentials in this worker (@trawl/crawl credentials.ts): the SecretBox
 * of TRAWL_SECRETS_KEY (and TRAWL_SECRETS_OLD_KEYS, keys being rotated out), which the API and the
 * dispatcher sealed them with. A value that is not sealed is a spec from before credentials were
 * sealed (still in a topic or a retry tier) and is used as it is.
 */
import type { CredentialOpener } from '@trawl/crawl';
import { credentialFingerprint, isSealed, openCredential, type SecretBox } from '@trawl/store/secrets';

export function credentialOpener(box: SecretBox): CredentialOpener {
  return {
    open: (value) => (isSealed(value) ? openCredential(box, value) : value),
    fingerprint: credentialFingerprint(box),
  };
}
