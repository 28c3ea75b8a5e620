/**
 * Guards against crawler traps: URL spaces that are infinite by construction (calendars, session ids
 * in paths, relative-link loops that grow `/a/b/a/b/…`). They only look at the URL string, so they
 * run for every link at the cost of one split.
 */
export interface TrapGuardOptions {
  /** Longer URLs are refused. Browsers and most servers stop near 2 KB; longer ones are nearly always generated. */
  readonly maxUrlLength: number;
  /** A path with more segments than this is refused. */
  readonly maxPathSegments: number;
  /** A segment seen this many times in one path is a loop (`/a/x/a/y/a`). */
  readonly maxSameSegment: number;
}

export const DEFAULT_TRAP_GUARDS: TrapGuardOptions = { maxUrlLength: 2048, maxPathSegments: 20, maxSameSegment: 3 };

export type TrapVerdict = 'url_too_long' | 'path_too_deep' | 'repeated_segments' | null;

/** Why `url` (normalised) looks like a trap, or null. */
export function detectTrap(url: string, options: TrapGuardOptions = DEFAULT_TRAP_GUARDS): TrapVerdict {
  if (url.length > options.maxUrlLength) return 'url_too_long';
  const path = pathOf(url);
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.length > options.maxPathSegments) return 'path_too_deep';
  if (segments.length < 2) return null;
  const counts = new Map<string, number>();
  for (const s of segments) {
    const n = (counts.get(s) ?? 0) + 1;
    if (n >= options.maxSameSegment) return 'repeated_segments';
    counts.set(s, n);
  }
  // A block of two or more segments repeated back to back (`/a/b/a/b`) is what a relative link
  // resolved against its own page produces; one repetition is already the loop.
  for (let len = 2; len * 2 <= segments.length; len++) {
    for (let start = 0; start + 2 * len <= segments.length; start++) {
      let same = true;
      for (let i = 0; i < len && same; i++) same = segments[start + i] === segments[start + len + i];
      if (same) return 'repeated_segments';
    }
  }
  return null;
}

function pathOf(url: string): string {
  const schemeEnd = url.indexOf('//');
  const pathStart = url.indexOf('/', schemeEnd + 2);
  if (pathStart === -1) return '/';
  const q = url.indexOf('?', pathStart);
  return q === -1 ? url.slice(pathStart) : url.slice(pathStart, q);
}
