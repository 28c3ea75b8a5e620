/**
 * Reach options as a request gives them (a crawl's body, a schedule's request, a website) and as
 * they are kept: `proxy` is a one-proxy `proxies`, a proxy may be a bare URL, actions and a login
 * get every field. Credentials stay as given (a literal or `{secret}`) here; sealing them is
 * @trawl/store's sealForStorage / resolvedSpec.
 */
import type { BrowserActionType, DownloadSpec, LinkScope, LoginKind, ProxyRotation } from '@trawl/schemas';
import type { Credential, StoredAction, StoredLogin, StoredOptions, StoredProxy } from '@trawl/store';

export interface ActionInput {
  readonly type: BrowserActionType;
  readonly selector?: string;
  readonly text?: Credential;
  readonly key?: string;
  readonly ms?: number;
  readonly times?: number;
  readonly full_page?: boolean;
}

export interface LoginInput {
  readonly kind: LoginKind;
  readonly url: string;
  readonly form_selector?: string;
  readonly fields?: Readonly<Record<string, Credential>>;
  readonly actions?: readonly ActionInput[];
  readonly success_selector?: string;
  readonly success_url_pattern?: string;
  readonly failure_text?: string;
}

export type ProxyInput = string | { readonly url: string; readonly username?: Credential; readonly password?: Credential };

/** The reach fields of a request body (API schemas request-options.ts reachOptionProperties). */
export interface ReachInput {
  readonly proxy?: string;
  readonly proxies?: readonly ProxyInput[];
  readonly proxy_rotation?: ProxyRotation;
  readonly sessions?: number;
  readonly login?: LoginInput | null;
  readonly actions?: readonly ActionInput[];
  readonly block_patterns?: readonly string[];
  readonly adaptive_throttle?: boolean;
  readonly include_patterns?: readonly string[];
  readonly exclude_patterns?: readonly string[];
  readonly scope?: LinkScope;
  readonly follow_nofollow?: boolean;
  readonly only_main_content?: boolean;
  readonly downloads?: DownloadSpec | null;
}

function action(a: ActionInput): StoredAction {
  return { type: a.type, selector: a.selector ?? null, text: a.text ?? null, key: a.key ?? null, ms: a.ms ?? null, times: a.times ?? null, full_page: a.full_page ?? false };
}

function proxy(p: ProxyInput): StoredProxy {
  return typeof p === 'string' ? { url: p, username: null, password: null } : { url: p.url, username: p.username ?? null, password: p.password ?? null };
}

function login(l: LoginInput): StoredLogin {
  return {
    kind: l.kind,
    url: l.url,
    form_selector: l.form_selector ?? null,
    fields: l.fields ?? {},
    actions: (l.actions ?? []).map(action),
    success_selector: l.success_selector ?? null,
    success_url_pattern: l.success_url_pattern ?? null,
    failure_text: l.failure_text ?? null,
  };
}

/** The reach part of a stored layer. */
export type ReachLayer = Omit<StoredOptions, 'headers' | 'user_agent' | 'locale' | 'cookies'>;

/** The options `body` sets, normalised; those it leaves out stay out (an earlier layer's apply). */
export function reachLayer(body: ReachInput): ReachLayer {
  const proxies = body.proxies ?? (body.proxy !== undefined ? [body.proxy] : undefined);
  return {
    ...(proxies !== undefined ? { proxies: proxies.map(proxy) } : {}),
    ...(body.proxy_rotation !== undefined ? { proxy_rotation: body.proxy_rotation } : {}),
    ...(body.sessions !== undefined ? { sessions: body.sessions } : {}),
    ...(body.login !== undefined ? { login: body.login === null ? null : login(body.login) } : {}),
    ...(body.actions !== undefined ? { actions: body.actions.map(action) } : {}),
    ...(body.block_patterns !== undefined ? { block_patterns: body.block_patterns } : {}),
    ...(body.adaptive_throttle !== undefined ? { adaptive_throttle: body.adaptive_throttle } : {}),
    ...(body.include_patterns !== undefined ? { include_patterns: body.include_patterns } : {}),
    ...(body.exclude_patterns !== undefined ? { exclude_patterns: body.exclude_patterns } : {}),
    ...(body.scope !== undefined ? { scope: body.scope } : {}),
    ...(body.follow_nofollow !== undefined ? { follow_nofollow: body.follow_nofollow } : {}),
    ...(body.only_main_content !== undefined ? { only_main_content: body.only_main_content } : {}),
    ...(body.downloads !== undefined ? { downloads: body.downloads } : {}),
  };
}
