/**
 * What a parse thread loads (`@trawl/crawl/parse`): the page parser, the job rules' cache and the
 * error it rebuilds on the other side, without the fetchers, Chromium's pool or undici, which a
 * thread that only parses has no use for.
 */
export { parsePage, DEFAULT_PARSE_LIMITS, type ParsedPage, type ParseLimits, type PageCut } from './parse-page.ts';
export { RulesCache } from '../worker/rules-cache.ts';
export type { DerivedFormats, ParseJob } from '../worker/page-processor.ts';
