import type { CrawlSpec, LinkScope } from '@trawl/schemas';
import { getDomain } from 'tldts';
import { InvalidSpecError } from '../errors.ts';
import { DEFAULT_TRAP_GUARDS, detectTrap, type TrapGuardOptions } from './trap-guards.ts';
import { PatternError, PatternList } from './user-patterns.ts';

/** Why a link is not followed; null means it is kept. */
export type RuleVerdict = 'off_host' | 'not_included' | 'excluded' | 'url_too_long' | 'path_too_deep' | 'repeated_segments' | null;

/** The spec's link scope: `scope` when set, else what `same_host` meant before the field existed. */
export function scopeOf(spec: Pick<CrawlSpec, 'scope' | 'same_host'>): LinkScope {
  return spec.scope ?? (spec.same_host ? 'same_host' : 'any');
}

/**
 * The link rules of one job, compiled once: patterns are compiled (and rejected when unusable) when
 * the job starts, not for every page, for a linear-time engine (user-patterns.ts). Works on
 * normalised URLs (see normaliseUrl).
 *
 * The scope (`scopeOf`) says which hosts a link may go to, always judged against the page the link
 * was found on (the *requested* URL, which passed these rules itself, so the crawl cannot drift
 * host by host through redirects):
 * - `same_host`: the page's host (port included), ignoring one leading `www.`;
 * - `same_domain`: the page's registrable domain (`shop.example.co.uk` and `blog.example.co.uk` are
 *   both `example.co.uk`, by the Public Suffix List that `tldts` ships), whatever the port; an IP
 *   address is its own domain;
 * - `any`: every host.
 * Under the first two, `allowed_hosts` add hosts (exact, or `*.example.com` / `.example.com` for
 * subdomains).
 */
export class CrawlRules {
  private readonly include: PatternList;
  private readonly exclude: PatternList;
  private readonly exactHosts: ReadonlySet<string>;
  private readonly hostSuffixes: readonly string[];
  readonly scope: LinkScope;
  /** Registrable domain by host: a page's links ask for a handful of hosts thousands of times. */
  private readonly domains = new Map<string, string>();

  constructor(
    readonly spec: CrawlSpec,
    private readonly traps: TrapGuardOptions = DEFAULT_TRAP_GUARDS,
  ) {
    this.include = compileAll(spec.include_patterns, 'include_patterns');
    this.exclude = compileAll(spec.exclude_patterns, 'exclude_patterns');
    const exact = new Set<string>();
    const suffixes: string[] = [];
    for (const raw of spec.allowed_hosts) {
      const h = raw.trim().toLowerCase();
      if (h.startsWith('*.')) suffixes.push(h.slice(1));
      else if (h.startsWith('.')) suffixes.push(h);
      else if (h !== '') exact.add(stripWww(h));
    }
    this.exactHosts = exact;
    this.hostSuffixes = suffixes;
    this.scope = scopeOf(spec);
  }

  /** Why `url` (normalised) found on `pageUrl` is not followed, or null when it is. */
  check(url: string, pageUrl: string): RuleVerdict {
    const trap = this.checkTrap(url);
    if (trap) return trap;
    if (!this.isHostAllowed(hostOf(url), hostOf(pageUrl))) return 'off_host';
    return this.checkPatterns(url);
  }

  /** Include/exclude patterns alone (pagination links skip them, see parsePage). */
  checkPatterns(url: string): 'not_included' | 'excluded' | null {
    if (this.include.size > 0 && !this.include.test(url)) return 'not_included';
    if (this.exclude.test(url)) return 'excluded';
    return null;
  }

  checkTrap(url: string): 'url_too_long' | 'path_too_deep' | 'repeated_segments' | null {
    return detectTrap(url, this.traps);
  }

  /** Host rule alone: in the scope of the page's host (see the class), or allowed. Hosts as in a URL, port included. */
  isHostAllowed(host: string, pageHost: string): boolean {
    if (this.scope === 'any') return true;
    const h = stripWww(host);
    if (h === stripWww(pageHost)) return true;
    if (this.scope === 'same_domain' && this.domainOf(host) === this.domainOf(pageHost)) return true;
    if (this.exactHosts.has(h)) return true;
    return this.hostSuffixes.some((s) => host.endsWith(s) || host === s.slice(1));
  }

  /** The registrable domain of a host (port dropped), or the host itself when it has none (an IP address, a public suffix). */
  domainOf(host: string): string {
    let domain = this.domains.get(host);
    if (domain === undefined) {
      const name = hostnameOf(host);
      domain = getDomain(name, { allowPrivateDomains: true }) ?? name;
      if (this.domains.size >= MAX_DOMAINS) this.domains.clear();
      this.domains.set(host, domain);
    }
    return domain;
  }
}

const MAX_DOMAINS = 10_000;

/** `host:port` → host (IPv6 keeps its brackets). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** Compile a spec's rules; throws {@link InvalidSpecError} naming the bad pattern. */
export function compileRules(spec: CrawlSpec, traps?: TrapGuardOptions): CrawlRules {
  return new CrawlRules(spec, traps);
}

function compileAll(patterns: readonly string[], field: string): PatternList {
  try {
    return PatternList.compile(patterns);
  } catch (err) {
    if (!(err instanceof PatternError)) throw err;
    throw new InvalidSpecError(`${field}[${err.index}] ${JSON.stringify(patterns[err.index])} ${err.message}`, { cause: err });
  }
}

/** Host (with port) of a normalised URL, without building a URL object. */
export function hostOf(url: string): string {
  const start = url.indexOf('//') + 2;
  let end = url.length;
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  return url.slice(start, end).toLowerCase();
}

function stripWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}
