/**
 * Whether reach options (proxies, sessions, a login, browser actions, block patterns, link rules)
 * may run as configured, checked where they are configured — a website, a schedule's request, a
 * crawl — so that the API answers 400 with a code and stores nothing. Pure; each concern is one
 * function below, called in turn by {@link checkReachOptions}. Messages name the field, never a
 * credential's value.
 */
import { checkProxies, type ProxyProblemCode } from '../proxy/check-proxies.ts';
import { selectorProblem } from '../parse/selector-check.ts';
import { PatternError, PatternList, patternProblem } from '../rules/user-patterns.ts';
import { MAX_BLOCK_PATTERN_LENGTH, MAX_BLOCK_PATTERNS } from '../blocks/block-classifier.ts';
import { actionsProblem, type ActionsCode } from './check-actions.ts';
/** A credential as configured: a literal or a secret's name (opaque here). */
type Credential = string | { readonly secret: string };

/** The reach options of one layer, as a request gives them once normalised (API reach-input.ts). */
export interface ReachOptionsInput {
  readonly proxies?: readonly { readonly url: string; readonly username: Credential | null; readonly password: Credential | null }[];
  readonly proxy_rotation?: string;
  readonly sessions?: number;
  readonly login?: {
    readonly kind: 'form' | 'browser';
    readonly url: string;
    readonly form_selector: string | null;
    readonly fields: Readonly<Record<string, Credential>>;
    readonly actions: readonly ReachActionInput[];
    readonly success_selector: string | null;
    readonly success_url_pattern: string | null;
    readonly failure_text: string | null;
  } | null;
  readonly actions?: readonly ReachActionInput[];
  readonly block_patterns?: readonly string[];
  readonly include_patterns?: readonly string[];
  readonly exclude_patterns?: readonly string[];
  readonly scope?: string | null;
  readonly follow_nofollow?: boolean;
}

export interface ReachActionInput {
  readonly type: string;
  readonly selector: string | null;
  readonly text: Credential | null;
  readonly key: string | null;
  readonly ms: number | null;
  readonly times: number | null;
  readonly full_page: boolean;
}

export type ReachOptionsCode = 'INVALID_LOGIN' | 'LOGIN_NEEDS_SESSIONS' | 'VALIDATION_FAILED' | 'UNSUPPORTED_PATTERN' | 'UNSUPPORTED_SELECTOR' | ProxyProblemCode | ActionsCode;

export interface ReachOptionsProblem {
  readonly code: ReachOptionsCode;
  /** Dotted path of the field at fault, under the caller's prefix. */
  readonly field: string;
  readonly message: string;
}

export interface ReachCheckContext {
  /** Dotted prefix of the fields (a schedule's `request.`). */
  readonly prefix?: string;
}

type Check = (options: ReachOptionsInput, ctx: Required<ReachCheckContext>) => ReachOptionsProblem | null;

function problem(code: ReachOptionsProblem['code'], field: string, message: string): ReachOptionsProblem {
  return { code, field, message: `${field} ${message}` };
}

/** A login runs once per session: without sessions there is nothing to keep it in. */
const checkLogin: Check = (options, { prefix }) => {
  const login = options.login;
  if (!login) return null;
  if ((options.sessions ?? 0) < 1) return problem('LOGIN_NEEDS_SESSIONS', `${prefix}sessions`, 'must be at least 1 with a login: a login runs once per session and its cookies are kept in the session');
  if (login.kind === 'form' && Object.keys(login.fields).length === 0) return problem('INVALID_LOGIN', `${prefix}login.fields`, 'must name the form fields to fill (a form login posts them)');
  if (login.kind === 'browser' && login.actions.length === 0) return problem('INVALID_LOGIN', `${prefix}login.actions`, 'must list the actions that log in (a browser login runs them)');
  if (login.success_selector === null && login.success_url_pattern === null && login.failure_text === null) {
    return problem('INVALID_LOGIN', `${prefix}login`, 'needs a rule that tells a login worked: `success_selector`, `success_url_pattern` or `failure_text`');
  }
  return null;
};

/** The login's selectors and pattern run on the worker like a website's: checked the same way (selector-check.ts, user-patterns.ts). */
const checkLoginRules: Check = (options, { prefix }) => {
  const login = options.login;
  if (!login) return null;
  for (const field of ['form_selector', 'success_selector'] as const) {
    const selector = login[field];
    const found = selector === null ? null : selectorProblem(selector);
    if (found) return problem(found.kind === 'costly' ? 'UNSUPPORTED_SELECTOR' : 'INVALID_LOGIN', `${prefix}login.${field}`, found.message);
  }
  const found = login.success_url_pattern === null ? null : patternProblem(login.success_url_pattern);
  if (found) return problem(found.kind === 'unsupported' ? 'UNSUPPORTED_PATTERN' : 'INVALID_LOGIN', `${prefix}login.success_url_pattern`, found.message);
  return null;
};

/** Proxies: http/https/socks5 URLs without credentials, at an address crawls may reach (proxy/check-proxies.ts). */
const checkProxiesOption: Check = (options, { prefix }) => checkProxies(options.proxies, prefix);

/** Browser actions, the crawl's and a browser login's: bounded, each with what its type needs, selectors that may run (check-actions.ts). */
const checkActions: Check = (options, { prefix }) => actionsProblem(options.actions, `${prefix}actions`) ?? actionsProblem(options.login?.actions, `${prefix}login.actions`);

/**
 * Block patterns run on every page a worker fetches, in the linear-time engine (user-patterns.ts):
 * bounded in count and length, each compilable alone and the list as one program, as a worker
 * compiles them (blocks/block-classifier.ts). Not a regular expression: VALIDATION_FAILED; one RE2
 * does not run as written, or a list too large: UNSUPPORTED_PATTERN.
 */
const checkBlockPatterns: Check = (options, { prefix }) => {
  const patterns = options.block_patterns ?? [];
  if (patterns.length > MAX_BLOCK_PATTERNS) return problem('VALIDATION_FAILED', `${prefix}block_patterns`, `lists ${patterns.length} patterns, more than the ${MAX_BLOCK_PATTERNS} allowed`);
  const long = patterns.findIndex((p) => p.length > MAX_BLOCK_PATTERN_LENGTH || p.length === 0);
  if (long !== -1) return problem('VALIDATION_FAILED', `${prefix}block_patterns.${long}`, `must be 1 to ${MAX_BLOCK_PATTERN_LENGTH} characters long`);
  try {
    PatternList.compile(patterns);
  } catch (err) {
    if (!(err instanceof PatternError)) throw err;
    return problem(err.problem.kind === 'invalid' ? 'VALIDATION_FAILED' : 'UNSUPPORTED_PATTERN', `${prefix}block_patterns.${err.index}`, err.message);
  }
  return null;
};

/** The checks, in the order their problems are reported. */
const CHECKS: readonly Check[] = [checkLogin, checkLoginRules, checkProxiesOption, checkActions, checkBlockPatterns];

/** The first problem of `options`, or null. */
export function checkReachOptions(options: ReachOptionsInput, ctx: ReachCheckContext = {}): ReachOptionsProblem | null {
  const full = { prefix: ctx.prefix ?? '' };
  for (const check of CHECKS) {
    const found = check(options, full);
    if (found) return found;
  }
  return null;
}
