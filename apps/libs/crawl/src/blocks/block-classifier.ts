/**
 * Block detection: is this answer the page, or the site refusing us? A challenge, a captcha, a page
 * the website says means "blocked" (`block_patterns`), or a body far smaller than the site's usual
 * is not content: stored, it would replace the page in the read models and the content store, and
 * parsed, it would give no items and end the crawl as if the site were empty. Such an answer is
 * classified here and fails its fetch with BlockedError (errors.ts, `TRAWL_BLOCKED`) (retriable: it goes through the
 * retry tiers with their back-off, on another session when the job has them).
 *
 * The rules, most certain first:
 *  - `challenge`: a 403/429/503 carrying a bot-protection challenge's markers (Cloudflare, Akamai,
 *    DataDome, PerimeterX, Imperva) or a captcha.
 *  - `captcha`: any status with a captcha widget (reCAPTCHA, hCaptcha, Turnstile) *and* a
 *    human-verification phrase ("verify you are human"). A widget alone is not enough: contact
 *    and comment forms carry reCAPTCHA on ordinary pages.
 *  - `pattern`: the body matches one of the spec's `block_patterns` (RE2, user-patterns.ts).
 *  - `small_body`: a 2xx HTML body under a fraction of the median size of this job's pages on this
 *    host, once enough pages were seen. Conservative on purpose (a real short page, a "no results"
 *    page, must not be taken for a block): a ratio of 0.1 by default, at least 20 samples, and a
 *    median of at least 4 KiB.
 *  - `login_wall` (login-wall.ts): a 401, or a page reached by a redirect whose HTML holds a
 *    password field when the URL asked for was not a login page: the site sends a visitor without
 *    its session to its login form. Without a declared login nothing gets past it, so the page
 *    fails `TRAWL_LOGIN_REQUIRED` at once (not retried); with one, the session lost its login
 *    and is retired like any blocked one.
 *
 * Only the first `scanChars` of a body are looked at (markers sit in the head and the first
 * screen), so a block check costs the same on every page whatever its size.
 */
import { InvalidSpecError, type BlockedError } from '../errors.ts';
import { envInteger } from '../config/env-integer.ts';
import { PatternError, PatternList } from '../rules/user-patterns.ts';
import { loginWallOf } from './login-wall.ts';

export type BlockRule = BlockedError['verdict']['rule'];

export const BLOCK_RULES: readonly BlockRule[] = ['challenge', 'captcha', 'pattern', 'small_body', 'login_wall'];

/** What a blocked answer is, and what follows from it. */
export interface BlockVerdict {
  readonly rule: BlockRule;
  /** For the job log and the page's error: which marker or pattern, never the body. */
  readonly reason: string;
  /** The session that met the block is spent: the session pool retires it and replaces it. */
  readonly retireSession: true;
}

export interface BlockClassifierOptions {
  /** Characters of a body looked at (TRAWL_BLOCK_SCAN_CHARS, default 256 Ki). */
  readonly scanChars?: number;
  /** A body under this fraction of the host's median is a block, in percent (TRAWL_BLOCK_SMALL_BODY_PERCENT, default 10; 0 turns the rule off). */
  readonly smallBodyPercent?: number;
  /** Pages of a job on a host seen before the size rule applies (TRAWL_BLOCK_SMALL_BODY_SAMPLES, default 20). */
  readonly smallBodySamples?: number;
  /** The least median, in bytes, the size rule applies under (a site of tiny pages has no "far smaller"). */
  readonly smallBodyMinMedian?: number;
  /** Sizes kept per (job, host) for the running median. */
  readonly window?: number;
  /** (job, host) size histories kept before the least recently used is dropped. */
  readonly maxHistories?: number;
}

export interface BlockInput {
  readonly jobId: string;
  readonly host: string;
  readonly status: number;
  /** The decoded body (HTML or text), null when none was read. */
  readonly body: string | null;
  readonly isHtml: boolean;
  /** Body bytes (FetchResult.bytes). */
  readonly bytes: number;
  /** The spec's block_patterns (compiled once per job). */
  readonly blockPatterns?: readonly string[];
  /** The URL asked for and where its redirects ended (FetchResult.finalUrl), for the login-wall rule; without them the rule looks at the status alone. */
  readonly url?: string;
  readonly finalUrl?: string;
}

/** Bot-protection challenge pages, by vendor: markers that appear on their challenge and denial pages. */
const CHALLENGE_MARKERS: readonly (readonly [string, RegExp])[] = [
  ['cloudflare challenge', /cf-chl-|cf_chl_opt|challenge-platform|<title>\s*(?:just a moment\.\.\.|attention required! \| cloudflare)/i],
  ['akamai denial', /errors\.edgesuite\.net|<title>\s*access denied\s*<\/title>[\s\S]{0,2000}reference\s*#/i],
  ['datadome', /captcha-delivery\.com|geo\.captcha-delivery|\bdatadome\b/i],
  ['perimeterx', /px-captcha|_pxcaptcha|perimeterx/i],
  ['imperva', /_incapsula_resource|incapsula incident id/i],
];

/** Captcha widgets: their scripts and their containers. */
const CAPTCHA_WIDGET = /google\.com\/recaptcha|recaptcha\/api\.js|class=["'][^"']*\bg-recaptcha\b|hcaptcha\.com\/1\/api\.js|js\.hcaptcha\.com|class=["'][^"']*\bh-captcha\b|challenges\.cloudflare\.com\/turnstile|class=["'][^"']*\bcf-turnstile\b/i;

/** What a page asking a human to prove it is one says. */
const HUMAN_CHECK = /verify (?:that )?you(?:'|’)?re (?:a )?human|verify (?:that )?you are (?:a )?human|are you a robot|are you human|prove you(?:'|’)?re not a robot|unusual traffic from your|complete the security check|<title>[^<]{0,80}captcha[^<]{0,80}<\/title>/i;

const CHALLENGE_STATUSES = new Set([403, 429, 503]);

export class BlockClassifier {
  private readonly scanChars: number;
  private readonly smallBodyRatio: number;
  private readonly smallBodySamples: number;
  private readonly smallBodyMinMedian: number;
  private readonly window: number;
  private readonly maxHistories: number;
  /** Body sizes of ordinary pages per (job, host), a ring of the last `window`, least recently used first. */
  private readonly sizes = new Map<string, { ring: number[]; next: number }>();
  /** Compiled block_patterns by job (a job's spec never changes). */
  private readonly patterns = new Map<string, PatternList>();

  constructor(options: BlockClassifierOptions = {}) {
    this.scanChars = options.scanChars ?? 256 * 1024;
    this.smallBodyRatio = (options.smallBodyPercent ?? 10) / 100;
    this.smallBodySamples = Math.max(1, options.smallBodySamples ?? 20);
    this.smallBodyMinMedian = options.smallBodyMinMedian ?? 4 * 1024;
    this.window = Math.max(this.smallBodySamples, options.window ?? 101);
    this.maxHistories = options.maxHistories ?? 10_000;
  }

  /**
   * The verdict on one answer, or null for an ordinary one. An ordinary 2xx HTML answer also joins
   * its host's size history; a blocked one never does (a run of blocks must not lower the median
   * it is judged by).
   */
  classify(input: BlockInput): BlockVerdict | null {
    const verdict = this.verdictOf(input);
    if (!verdict && input.isHtml && input.status >= 200 && input.status < 300 && input.body !== null) this.record(input.jobId, input.host, input.bytes);
    return verdict;
  }

  /** The running median of a job's page sizes on a host (null until one is seen), for tests and the log. */
  medianOf(jobId: string, host: string): number | null {
    const h = this.sizes.get(`${jobId}\u0000${host}`);
    return h && h.ring.length > 0 ? median(h.ring) : null;
  }

  private verdictOf(input: BlockInput): BlockVerdict | null {
    const text = input.body === null ? '' : input.body.length > this.scanChars ? input.body.slice(0, this.scanChars) : input.body;
    if (CHALLENGE_STATUSES.has(input.status) && text) {
      for (const [name, re] of CHALLENGE_MARKERS) if (re.test(text)) return block('challenge', `HTTP ${input.status} with a ${name} page`);
      if (CAPTCHA_WIDGET.test(text) || HUMAN_CHECK.test(text)) return block('challenge', `HTTP ${input.status} with a captcha`);
    }
    if (text && CAPTCHA_WIDGET.test(text) && HUMAN_CHECK.test(text)) return block('captcha', `a captcha page (HTTP ${input.status})`);
    const patterns = input.blockPatterns?.length ? this.patternsOf(input.jobId, input.blockPatterns) : PatternList.EMPTY;
    if (text && patterns.size > 0 && patterns.test(text)) return block('pattern', 'the body matches one of block_patterns');
    const wall = loginWallOf({ status: input.status, isHtml: input.isHtml, text, url: input.url ?? null, finalUrl: input.finalUrl ?? input.url ?? null });
    if (wall) return block('login_wall', wall);
    if (this.smallBodyRatio > 0 && input.isHtml && input.status >= 200 && input.status < 300 && input.body !== null) {
      const h = this.sizes.get(`${input.jobId}\u0000${input.host}`);
      if (h && h.ring.length >= this.smallBodySamples) {
        const usual = median(h.ring);
        if (usual >= this.smallBodyMinMedian && input.bytes < usual * this.smallBodyRatio) {
          return block('small_body', `a ${input.bytes}-byte body where this host's pages are ${Math.round(usual)} bytes (median)`);
        }
      }
    }
    return null;
  }

  /** A pattern that cannot be used (the API refuses it; an older spec may carry one) fails the job's pages for good: InvalidSpecError. */
  private patternsOf(jobId: string, list: readonly string[]): PatternList {
    let compiled = this.patterns.get(jobId);
    if (!compiled) {
      try {
        compiled = compileBlockPatterns(list);
      } catch (err) {
        if (err instanceof PatternError) throw new InvalidSpecError(`block_patterns[${err.index}] ${err.problem.message}`, { cause: err });
        throw err;
      }
      if (this.patterns.size >= 1_000) this.patterns.delete(this.patterns.keys().next().value!);
      this.patterns.set(jobId, compiled);
    }
    return compiled;
  }

  private record(jobId: string, host: string, bytes: number): void {
    const key = `${jobId}\u0000${host}`;
    let h = this.sizes.get(key);
    if (h) this.sizes.delete(key);
    else {
      if (this.sizes.size >= this.maxHistories) this.sizes.delete(this.sizes.keys().next().value!);
      h = { ring: [], next: 0 };
    }
    this.sizes.set(key, h);
    if (h.ring.length < this.window) h.ring.push(bytes);
    else h.ring[h.next] = bytes;
    h.next = (h.next + 1) % this.window;
  }
}

function block(rule: BlockRule, reason: string): BlockVerdict {
  return { rule, reason, retireSession: true };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A spec's block_patterns compiled as one program (bounded in count and length); a pattern that cannot be used throws PatternError. */
export function compileBlockPatterns(patterns: readonly string[]): PatternList {
  return PatternList.compile(patterns.slice(0, MAX_BLOCK_PATTERNS).map((p) => p.slice(0, MAX_BLOCK_PATTERN_LENGTH)));
}

/** Block patterns a spec may declare, and the longest one (the API refuses more; a worker compiles no more). */
export const MAX_BLOCK_PATTERNS = 32;
export const MAX_BLOCK_PATTERN_LENGTH = 500;

/** The classifier's settings from the environment (TRAWL_BLOCK_*). */
export function blockClassifierOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BlockClassifierOptions {
  return {
    scanChars: envInteger(env, 'TRAWL_BLOCK_SCAN_CHARS', 256 * 1024, 1024),
    smallBodyPercent: envInteger(env, 'TRAWL_BLOCK_SMALL_BODY_PERCENT', 10, 0),
    smallBodySamples: envInteger(env, 'TRAWL_BLOCK_SMALL_BODY_SAMPLES', 20, 1),
  };
}
