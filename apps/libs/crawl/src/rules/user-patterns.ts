/**
 * Users' regular expressions (a website's include/exclude patterns), run by re2js: RE2's
 * automata-based engine in plain JavaScript, whose matching time is linear in the input for every
 * pattern. V8's backtracking engine is not: `^https?://[^/]+/(a+)+$` against `/` + 40 `a`s + `!`
 * runs for hours, and patterns are tested against every link of every page a worker parses.
 *
 * The price is RE2's syntax: no backreferences and no lookaround, the constructs that need
 * backtracking. A pattern using one is refused when it is configured (the API's
 * `UNSUPPORTED_PATTERN`, which names the construct) and, should an older one reach a worker, when
 * the job's rules are compiled. JavaScript spellings RE2 lacks (`\u00e9`, `[^]`, `\cJ`) are
 * translated; letter escapes the engines read differently (`\a`, `\z`, `\pL`) are refused, so a
 * pattern either means what `new RegExp` meant or is refused, never something else.
 *
 * Linear is not free: a link costs its length times the size of the compiled program when the
 * engine's DFA gives up (`a[ab]{200}$` against random `a`/`b` paths). Programs are therefore
 * capped per list (MAX_PATTERN_PROGRAM), and a page's rule checks have a time budget on top
 * (extractLinks).
 */
import { RE2JS } from 're2js';
import { TrawlError } from '@trawl/schemas';

/** Instructions a list of patterns (include or exclude) may compile to, together. A typical pattern is 5–50. */
export const MAX_PATTERN_PROGRAM = 4_000;

/** Why a pattern cannot be used. `invalid`: not a regular expression at all; `unsupported`: one RE2 does not run as JavaScript would, or too large. */
export interface PatternProblem {
  readonly kind: 'invalid' | 'unsupported';
  /** The construct at fault, in words (`a backreference (\1)`), for the error message. */
  readonly construct: string;
  readonly message: string;
}

/**
 * A pattern that cannot be used; `index` is its position in the list. Callers turn it into their
 * own refusal (a job's INVALID_SPEC, the API's VALIDATION_FAILED), which says where it was given.
 */
export class PatternError extends TrawlError {
  readonly code = 'TRAWL_INVALID_PATTERN';
  readonly retriable = false;
  constructor(
    readonly index: number,
    readonly problem: PatternProblem,
  ) {
    super(problem.message);
  }
}

/**
 * A list of patterns, tested as one program: their union `(?:p1)|(?:p2)|…` makes one pass over a
 * link however many patterns there are (50 patterns: ~1 µs a link instead of ~10 µs one by one).
 * Each pattern is also compiled alone first, so a problem is reported with its index.
 */
export class PatternList {
  private constructor(
    private readonly programs: readonly RE2JS[],
    readonly size: number,
    /** Instructions of the list's programs: what one character of input can cost. */
    readonly programSize: number,
  ) {}

  static readonly EMPTY = new PatternList([], 0, 0);

  /** Compiles `patterns`; throws a {@link PatternError} for the first that cannot be used. */
  static compile(patterns: readonly string[]): PatternList {
    if (patterns.length === 0) return PatternList.EMPTY;
    const alone: RE2JS[] = [];
    let size = 0;
    patterns.forEach((pattern, index) => {
      const re = compileOne(pattern, index);
      size += re.programSize();
      if (size > MAX_PATTERN_PROGRAM) {
        throw new PatternError(index, {
          kind: 'unsupported',
          construct: 'too large a program',
          message: `the patterns up to this one compile to ${size} instructions, over the ${MAX_PATTERN_PROGRAM} a list may use (large counted repetitions such as {1000} cost one instruction per repetition)`,
        });
      }
      alone.push(re);
    });
    if (alone.length === 1) return new PatternList(alone, 1, size);
    try {
      const union = RE2JS.compile(patterns.map((p) => `(?:${RE2JS.translateRegExp(p)})`).join('|'));
      return new PatternList([union], patterns.length, size);
    } catch {
      // Two patterns naming a capture group alike cannot share a program: they are tested one by one.
      return new PatternList(alone, patterns.length, size);
    }
  }

  /** Whether any pattern matches somewhere in `text` (RegExp#test semantics, unanchored). */
  test(text: string): boolean {
    for (const re of this.programs) if (re.test(text)) return true;
    return false;
  }
}

/** What is wrong with `pattern` for the linear-time engine, or null when it can be used alone. */
export function patternProblem(pattern: string): PatternProblem | null {
  try {
    compileOne(pattern, 0);
    return null;
  } catch (err) {
    if (err instanceof PatternError) return err.problem;
    throw err;
  }
}

/**
 * One pattern compiled alone, refused as a list's would be (a field's `regex` transform, an item
 * schema's `pattern`: parse/item-transforms.ts, parse/item-schema.ts); throws a {@link PatternError}.
 */
export function compilePattern(pattern: string): RE2JS {
  const re = compileOne(pattern, 0);
  if (re.programSize() > MAX_PATTERN_PROGRAM) {
    throw new PatternError(0, { kind: 'unsupported', construct: 'too large a program', message: `compiles to ${re.programSize()} instructions, over the ${MAX_PATTERN_PROGRAM} a pattern may use` });
  }
  return re;
}

function compileOne(pattern: string, index: number): RE2JS {
  // V8 compiles (never matches) here: it says whether the text is a regular expression at all.
  try {
    new RegExp(pattern);
  } catch (syntax) {
    throw new PatternError(index, { kind: 'invalid', construct: 'syntax', message: `is not a valid regular expression: ${(syntax as Error).message}` });
  }
  // Before RE2 sees it: translated, `\k<name>` would quietly become the letters `k<name>`.
  const construct = unsupportedConstruct(pattern);
  if (construct) {
    throw new PatternError(index, { kind: 'unsupported', construct, message: `uses ${construct}; patterns run in a linear-time engine (RE2 syntax), which has no backtracking` });
  }
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    const engineSays = err instanceof Error ? err.message : String(err);
    throw new PatternError(index, { kind: 'unsupported', construct: 'RE2 syntax', message: `is not RE2 syntax, which patterns run in (${engineSays})` });
  }
}

/** Escapes JavaScript and RE2 read alike; any other `\` + letter is a literal letter to JavaScript and something else, or an error, to RE2 (`\a`, `\z`, `\pL`, `\Q`). */
const SHARED_ESCAPES = new Set('bBdDsSwWfnrtvcxu0');

/**
 * The first construct of `pattern` that the linear-time engine does not run as JavaScript does,
 * named for a human, or null: backreferences and lookaround (they need backtracking), and letter
 * escapes the two engines read differently. A light scan: escapes are skipped and character
 * classes are only looked into for escapes.
 */
export function unsupportedConstruct(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && next >= '1' && next <= '9') return `a backreference (\\${next})`;
      if (next === 'k' && pattern[i + 2] === '<') return 'a named backreference (\\k<name>)';
      if (/^[a-zA-Z]$/.test(next) && !SHARED_ESCAPES.has(next)) return `the escape \\${next}, which RE2 reads differently`;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=')) return 'a lookahead ((?=…))';
      if (rest.startsWith('!')) return 'a negative lookahead ((?!…))';
      if (rest === '<=') return 'a lookbehind ((?<=…))';
      if (rest === '<!') return 'a negative lookbehind ((?<!…))';
    }
  }
  return null;
}
