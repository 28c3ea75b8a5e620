/**
 * robots.txt as RFC 9309 reads it: groups of user-agent lines followed by rules; the group(s) naming
 * our product token win over `*`; Allow/Disallow paths with `*` and a final `$`; the longest matching
 * rule decides and Allow wins a tie. Crawl-delay (not in the RFC, widely used) is read per group.
 *
 * Patterns are matched as globs, not regular expressions: as a regex, `/*a*a*a*a*b$` against a
 * 200-character path of `a`s backtracks for 14 s (polynomial in the path, one power per `*`), and
 * robots.txt is written by the crawled site. Split at its `*`s once, a pattern matches by finding
 * each literal piece leftmost after the previous one, in time linear in the path per piece.
 */
export interface RobotsRule {
  readonly allow: boolean;
  readonly pattern: string;
  /** The pattern's literal pieces between `*`s (a final `$` removed). */
  readonly pieces: readonly string[];
  /** The pattern ended with `$`: the last piece must end the path. */
  readonly anchored: boolean;
}

export interface RobotsRules {
  /** Whether `pathAndQuery` (starting with `/`, percent-encoded as in a normalised URL) may be fetched. */
  isAllowed(pathAndQuery: string): boolean;
  /** Crawl-delay of the applicable group, in milliseconds. */
  readonly crawlDelayMs: number | null;
  readonly sitemaps: readonly string[];
  /**
   * What keeping these rules may cost, in characters: the file read plus the patterns kept (a
   * pattern can be a slice that keeps the whole file alive). Caches bound themselves by it.
   */
  readonly size: number;
}

/** RFC 9309 asks crawlers to parse at least 500 KiB; past that the rest is ignored. */
export const MAX_ROBOTS_BYTES = 500 * 1024;

interface Group {
  agents: string[];
  rules: RobotsRule[];
  crawlDelayMs: number | null;
}

export const ALLOW_ALL: RobotsRules = { isAllowed: () => true, crawlDelayMs: null, sitemaps: [], size: 0 };

export function parseRobots(text: string, productToken: string): RobotsRules {
  const token = productToken.toLowerCase();
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | null = null;
  let lastWasAgent = false;
  for (const rawLine of text.slice(0, MAX_ROBOTS_BYTES).split(/\r\n|\r|\n/)) {
    const hash = rawLine.indexOf('#');
    const line = (hash === -1 ? rawLine : rawLine.slice(0, hash)).trim();
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [], crawlDelayMs: null };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase().split('/')[0]!.trim());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key === 'sitemap') {
      sitemaps.push(value);
      continue;
    }
    if (!current) continue; // rules before any user-agent line belong to no group
    if (key === 'allow' || key === 'disallow') {
      if (value === '') continue; // "Disallow:" with nothing allows everything
      const pattern = normalisePattern(value);
      current.rules.push({ allow: key === 'allow', pattern, ...compilePattern(pattern) });
    } else if (key === 'crawl-delay') {
      const seconds = Number(value);
      if (Number.isFinite(seconds) && seconds >= 0) current.crawlDelayMs = Math.round(seconds * 1000);
    }
  }
  const mine = groups.filter((g) => g.agents.includes(token));
  const chosen = mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const crawlDelayMs = chosen.reduce<number | null>((d, g) => (g.crawlDelayMs === null ? d : Math.max(d ?? 0, g.crawlDelayMs)), null);
  // Longest pattern first, Allow before Disallow on equal length: the first match decides.
  rules.sort((a, b) => b.pattern.length - a.pattern.length || Number(b.allow) - Number(a.allow));
  const size = Math.min(text.length, MAX_ROBOTS_BYTES) + rules.reduce((n, r) => n + r.pattern.length, 0) + sitemaps.reduce((n, u) => n + u.length, 0);
  return {
    crawlDelayMs,
    sitemaps,
    size,
    isAllowed(pathAndQuery: string): boolean {
      if (pathAndQuery === '/robots.txt') return true;
      for (const r of rules) if (globMatches(r, pathAndQuery)) return r.allow;
      return true;
    },
  };
}

function compilePattern(pattern: string): Pick<RobotsRule, 'pieces' | 'anchored'> {
  const anchored = pattern.endsWith('$');
  return { pieces: (anchored ? pattern.slice(0, -1) : pattern).split('*'), anchored };
}

/** Whether the glob matches `path` from its start: leftmost placement of each piece is the one that leaves the most room for the rest. */
export function globMatches(rule: Pick<RobotsRule, 'pieces' | 'anchored'>, path: string): boolean {
  const { pieces, anchored } = rule;
  const first = pieces[0]!;
  if (!path.startsWith(first)) return false;
  if (pieces.length === 1) return !anchored || path.length === first.length;
  let at = first.length;
  const last = pieces.length - 1;
  for (let i = 1; i < last; i++) {
    const found = path.indexOf(pieces[i]!, at);
    if (found === -1) return false;
    at = found + pieces[i]!.length;
  }
  const tail = pieces[last]!;
  return anchored ? path.length - tail.length >= at && path.endsWith(tail) : path.indexOf(tail, at) !== -1;
}

/** Percent-encode what a URL would encode and upper-case escapes, so patterns compare with normalised URLs. */
function normalisePattern(p: string): string {
  const withSlash = p.startsWith('/') || p.startsWith('*') ? p : `/${p}`;
  return withSlash
    .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => {
      const ch = String.fromCharCode(parseInt(h, 16));
      return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${h.toUpperCase()}`;
    })
    .replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}
