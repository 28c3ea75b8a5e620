/**
 * Reach options as they are configured and stored — on a website (`reach` column), in a
 * schedule's stored request — and how they become a spec's. A credential (a proxy's user name or
 * password, a login field, the text an action types, a header value, a cookie) is configured as a
 * literal or as `{secret: name}` (one of the user's secrets). What is stored holds literals already
 * sealed and names as names (secrets/seal-credentials.ts sealForStorage); a job's spec holds every
 * credential sealed (invariant 10; crawl-spec.ts resolvedSpec).
 */
import type { BrowserAction, DownloadSpec, LinkScope, LoginSpec, ProxyRotation } from '@trawl/schemas';
import type { CredentialInput } from '../secrets/seal-credentials.ts';

/** A credential as configured: a value (sealed once stored) or the name of one of the user's secrets. */
export type Credential = CredentialInput;

export interface StoredProxy {
  readonly url: string;
  readonly username: Credential | null;
  readonly password: Credential | null;
}

export type StoredAction = Omit<BrowserAction, 'text'> & { readonly text: Credential | null };

export type StoredLogin = Omit<LoginSpec, 'fields' | 'actions'> & {
  readonly fields: Readonly<Record<string, Credential>>;
  readonly actions: readonly StoredAction[];
};

/** One layer of options as stored (a website's, a schedule's request, a crawl's body once normalised). */
export interface StoredOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly user_agent?: string | null;
  readonly locale?: string | null;
  readonly cookies?: Readonly<Record<string, readonly string[]>>;
  readonly proxies?: readonly StoredProxy[];
  readonly proxy_rotation?: ProxyRotation;
  readonly sessions?: number;
  readonly login?: StoredLogin | null;
  readonly actions?: readonly StoredAction[];
  readonly block_patterns?: readonly string[];
  readonly adaptive_throttle?: boolean;
  readonly include_patterns?: readonly string[];
  readonly exclude_patterns?: readonly string[];
  readonly scope?: LinkScope | null;
  readonly follow_nofollow?: boolean;
  readonly only_main_content?: boolean;
  readonly downloads?: DownloadSpec | null;
}
