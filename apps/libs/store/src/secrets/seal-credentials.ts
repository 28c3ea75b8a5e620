/**
 * Credentials of a crawl's options, sealed before they go anywhere (invariant 10). A credential is
 * any value of the options that a site or a proxy takes as proof: a header's value, a cookie
 * string, a proxy's username and password, a login field's value, the `text` an action types. In a
 * request (API input) each is a literal string or `{ "secret": "<name>" }`, a user secret
 * (user-secrets.ts).
 *
 * - `sealCredentials` makes a layer spec-ready: every credential a sealed `tsec1.` string, so that
 *   events (JobDispatched, FetchRequested), crawl_specs and every read model hold no clear one. The
 *   worker opens them where it sends them (CREDENTIAL_CONTEXT). Sealing is randomized, so the clear
 *   values also come back, for checks (a cookie must parse) and for the dedupe key, which is a keyed
 *   fingerprint of them (SecretBox.fingerprint), never a bare hash of a credential.
 * - `sealForStorage` makes a layer fit to keep (a website, a schedule's request): literals sealed,
 *   `{secret}` references kept as references, so that a website's job always uses the secret's
 *   current value. Unknown names are refused here already.
 *
 * A layer read back from storage (`from: 'stored'`) holds sealed strings, which are kept as they are
 * (and opened for the clear copy); a clear string there (a row from before sealing) is sealed. A
 * request (`from: 'request'`) is never trusted to hold sealed values: a literal that looks sealed is
 * sealed again like any other, so no one can smuggle a sealed value into a spec.
 */
import { TrawlError } from '@trawl/schemas';
import { isSealed, type SecretBox } from './secret-box.ts';

/** The context every credential of a spec (and of a stored website or schedule) is sealed under. */
export const CREDENTIAL_CONTEXT = 'crawl.credential';

/** A credential as a request gives it. */
export type CredentialInput = string | { readonly secret: string };

/** The user's secrets by name (those the user has); resolveUserSecrets/userSecretLookup. */
export type SecretLookup = (names: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/** A name the user has no secret of: `field` is where it was named (`headers.authorization`). */
export class UnknownSecretError extends TrawlError {
  readonly code = 'UNKNOWN_SECRET';
  readonly retriable = false;
  constructor(
    readonly secretName: string,
    readonly field: string,
  ) {
    super(`${field} names the secret ${JSON.stringify(secretName)}, which you have not created (POST /secrets)`);
  }
}

/**
 * The places credentials sit in options (a crawl request, a website, a schedule's request, a spec),
 * each field optional. Other fields pass through untouched.
 */
export interface CredentialFields<V> {
  readonly headers?: Readonly<Record<string, V>>;
  readonly cookies?: Readonly<Record<string, readonly V[]>>;
  readonly proxies?: readonly { readonly username?: V | null; readonly password?: V | null }[];
  readonly login?: { readonly fields?: Readonly<Record<string, V>>; readonly actions?: readonly { readonly text?: V | null }[] } | null;
  readonly actions?: readonly { readonly text?: V | null }[];
}

type Visit = (value: CredentialInput, field: string) => unknown;

function isRef(value: unknown): value is { readonly secret: string } {
  return typeof value === 'object' && value !== null && typeof (value as { secret?: unknown }).secret === 'string';
}

function isCredential(value: unknown): value is CredentialInput {
  return typeof value === 'string' || isRef(value);
}

function mapRecord(record: Readonly<Record<string, unknown>> | undefined, field: string, visit: Visit): Record<string, unknown> | undefined {
  if (!record || typeof record !== 'object') return record as undefined;
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, isCredential(v) ? visit(v, `${field}.${k}`) : v]));
}

function mapTexts(list: readonly unknown[] | undefined, field: string, visit: Visit): unknown[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map((a, i) => (a && typeof a === 'object' && isCredential((a as { text?: unknown }).text) ? { ...a, text: visit((a as { text: CredentialInput }).text, `${field}.${i}.text`) } : a));
}

/** A copy of `options` with each credential replaced by `visit(value, field)`; nothing else changes. */
export function mapCredentials<T extends object>(options: T, visit: Visit): T {
  const o = options as CredentialFields<unknown> & Record<string, unknown>;
  const out: Record<string, unknown> = { ...o };
  if (o.headers !== undefined) out.headers = mapRecord(o.headers, 'headers', visit);
  if (o.cookies && typeof o.cookies === 'object') {
    out.cookies = Object.fromEntries(Object.entries(o.cookies).map(([domain, list]) => [domain, Array.isArray(list) ? list.map((c, i) => (isCredential(c) ? visit(c, `cookies.${domain}.${i}`) : c)) : list]));
  }
  if (Array.isArray(o.proxies)) {
    out.proxies = o.proxies.map((p, i) => {
      if (!p || typeof p !== 'object') return p;
      const copy: Record<string, unknown> = { ...p };
      for (const k of ['username', 'password'] as const) if (isCredential(p[k])) copy[k] = visit(p[k], `proxies.${i}.${k}`);
      return copy;
    });
  }
  if (o.login && typeof o.login === 'object') {
    const login: Record<string, unknown> = { ...o.login };
    if (o.login.fields !== undefined) login.fields = mapRecord(o.login.fields, 'login.fields', visit);
    if (o.login.actions !== undefined) login.actions = mapTexts(o.login.actions, 'login.actions', visit);
    out.login = login;
  }
  if (o.actions !== undefined) out.actions = mapTexts(o.actions, 'actions', visit);
  return out as T;
}

/** Every secret name `options` refers to, with the first field that names it. */
export function secretNames(options: object): Map<string, string> {
  const names = new Map<string, string>();
  mapCredentials(options, (value, field) => {
    if (isRef(value) && !names.has(value.secret)) names.set(value.secret, field);
    return value;
  });
  return names;
}

async function resolved(options: object, lookup: SecretLookup): Promise<ReadonlyMap<string, string>> {
  const names = secretNames(options);
  if (names.size === 0) return new Map();
  const values = await lookup([...names.keys()]);
  for (const [name, field] of names) if (!values.has(name)) throw new UnknownSecretError(name, field);
  return values;
}

export interface SealOptions {
  readonly box: SecretBox;
  /** The user's secrets; a request naming none needs no lookup. */
  readonly lookup?: SecretLookup;
  /** `request` (default): strings are literals, always sealed. `stored`: strings are what sealForStorage kept. */
  readonly from?: 'request' | 'stored';
}

/** A layer spec-ready (`sealed`), and the same with every credential clear (`clear`: in memory only, for checks and the dedupe key). */
export interface SealedCredentials<T> {
  readonly sealed: T;
  readonly clear: T;
}

/**
 * Every credential of `options` sealed (CREDENTIAL_CONTEXT); `{secret}` references resolved through
 * `lookup` first. UnknownSecretError for a name the user has no secret of; nothing is sealed then.
 */
export async function sealCredentials<T extends object>(options: T, { box, lookup, from = 'request' }: SealOptions): Promise<SealedCredentials<T>> {
  const values = await resolved(options, lookup ?? noLookup);
  const clearOf = (value: CredentialInput): string => {
    if (isRef(value)) return values.get(value.secret)!;
    return from === 'stored' && isSealed(value) ? box.open(value, CREDENTIAL_CONTEXT) : value;
  };
  const clear = mapCredentials(options, clearOf);
  const sealed = mapCredentials(options, (value) => (from === 'stored' && typeof value === 'string' && isSealed(value) ? value : box.seal(clearOf(value), CREDENTIAL_CONTEXT)));
  return { sealed, clear };
}

/**
 * `options` fit to keep: literals sealed, `{secret}` references kept (checked: UnknownSecretError
 * for a name the user has no secret of). `clear` has the literals and the secrets' current values.
 */
export async function sealForStorage<T extends object>(options: T, { box, lookup }: Omit<SealOptions, 'from'>): Promise<SealedCredentials<T>> {
  const values = await resolved(options, lookup ?? noLookup);
  const clear = mapCredentials(options, (value) => (isRef(value) ? values.get(value.secret)! : value));
  const stored = mapCredentials(options, (value) => (isRef(value) ? { secret: value.secret } : box.seal(value, CREDENTIAL_CONTEXT)));
  return { sealed: stored, clear };
}

/**
 * `options` as a user may see them again (a website's GET): a sealed literal is `"[sealed]"`, a
 * reference stays `{secret: name}`. Never a credential, nor its sealed form.
 */
export function redactCredentials<T extends object>(options: T): T {
  return mapCredentials(options, (value) => (isRef(value) ? { secret: value.secret } : REDACTED));
}

export const REDACTED = '[sealed]';

/** Opens one credential of a spec (what the worker does where it sends it). */
export function openCredential(box: SecretBox, sealed: string): string {
  return box.open(sealed, CREDENTIAL_CONTEXT);
}

/** The keyed fingerprint function for credentials (requestOptionsKey's digest, the dedupe key). */
export function credentialFingerprint(box: SecretBox): (canonical: string) => string {
  return (canonical) => box.fingerprint('request options', canonical);
}

const noLookup: SecretLookup = async () => new Map();
