import type { CrawlSpec } from '@trawl/schemas';
import { InvalidSpecError } from '../errors.ts';
import { DEFAULT_TRAP_GUARDS, detectTrap, type TrapGuardOptions } from './trap-guards.ts';
import { PatternError, PatternList } from './user-patterns.ts';

/** Why a link is not followed; null means it is kept. */
export type RuleVerdict = 'off_host' | 'not_included' | 'excluded' | 'url_too_long' | 'path_too_deep' | 'repeated_segments' | null;

/**
 * The link rules of one job, compiled once: patterns are compiled (and rejected when unusable) when
 * the job starts, not for every page, for a linear-time engine (user-patterns.ts). Works on
 * normalised URLs (see normaliseUrl).
 *
 * Same host means: the host of the page the link was found on (the *requested* URL, which passed
 * these rules itself, so the crawl cannot drift host by host through redirects), ignoring one leading
 * `www.`, or one of `allowed_hosts` (exact, or `*.example.com` / `.example.com` for subdomains).
 */
export class CrawlRules {
  private readonly include: PatternList;
  private readonly exclude: PatternList;
  private readonly exactHosts: ReadonlySet<string>;
  private readonly hostSuffixes: readonly string[];

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

  /** Host rule alone: same host as the page (or any host when same_host is off), or allowed. */
  isHostAllowed(host: string, pageHost: string): boolean {
    if (!this.spec.same_host) return true;
    const h = stripWww(host);
    if (h === stripWww(pageHost)) return true;
    if (this.exactHosts.has(h)) return true;
    return this.hostSuffixes.some((s) => host.endsWith(s) || host === s.slice(1));
  }
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
