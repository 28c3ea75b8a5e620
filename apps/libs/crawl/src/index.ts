/**
 * @trawl/crawl — the crawl without Kafka: URL normalisation and rules, the frontier decider, fetch
 * safety, HTTP and browser fetching, robots.txt and politeness, parsing and extraction, and the
 * worker's per-page processing. The Kafka wiring (apps/services/frontier, apps/services/worker) calls these.
 */

// errors
export { ActionFailedError, HostBusyError, InvalidConfigError, InvalidSpecError, ParseCrashedError, ParseTimeoutError } from './errors.ts';

// URLs and rules
export { normaliseUrl, normaliseUrlOrNull, fetchId } from './url/normalise.ts';
export { CrawlRules, compileRules, hostOf, type RuleVerdict } from './rules/crawl-rules.ts';
export { detectTrap, DEFAULT_TRAP_GUARDS, type TrapGuardOptions, type TrapVerdict } from './rules/trap-guards.ts';
export { isNonFetchableHref } from './rules/href-filter.ts';

// params as template values
export { renderUrl, renderSelector, specWithParams, specParamNames, templateNames, cssEscape, type Params } from './params/param-template.ts';

// safety
export { AddressPolicy } from './safety/address-policy.ts';
export { parseAllowList, parseAllowEntry, type AllowList, type AllowEntry, type PortRange } from './safety/allow-list.ts';
export { embeddedV4s, type EmbeddedV4, type TransitionForm } from './safety/embedded-v4.ts';
export { SafeResolver, urlPort, type SafeResolverOptions, type Resolve, type LookupFunction } from './safety/safe-resolver.ts';
export { startEgressProxy, type EgressProxy } from './safety/egress-proxy.ts';
export { MAX_PAGE_NOTES, ProxyPools, ProxyConnectError, ProxySpecError, parseProxyUrl, proxyPoolsOptionsFromEnv, PROXY_SCHEMES, type ProxyChoice, type ProxyEndpoint, type ProxyObserver, type ProxyOutcome, type ProxyPoolsOptions, type ProxyScheme } from './proxy/proxy-pool.ts';
export { pinnedConnector, type PinnedConnectorOptions } from './safety/pinned-connector.ts';
export { stackExposures, describeExposures, type StackExposure, type StackListener, type KnownAddresses } from './safety/stack-exposure.ts';
export { egressPolicyFromEnv, findStackExposures, stackExposureMessage, stackPortsAllowed, ALLOW_STACK_VARIABLE, type EgressGuardOptions, type GuardedPolicy } from './safety/egress-guard.ts';
export { UnsafeAddressError, unsafeAddressLogFields } from './errors.ts';
export { BlockedError, LoginRequiredError } from './errors.ts';
export { LoginFailedError, NotStoredError } from './errors.ts';

// fetching
export type { FetchResult } from './fetch/fetch-result.ts';
export { HttpFetcher, DEFAULT_USER_AGENT, type HttpFetcherOptions, type FetchOptions } from './fetch/http-fetcher.ts';
export { BrowserFetcher, CHROMIUM_ARGS, type BrowserFetcherOptions, type BrowserFetchOptions } from './fetch/browser-fetcher.ts';
export { actionLimitsFromEnv, browserWorkOf, CAPTURE_FORMATS, DEFAULT_ACTION_LIMITS, MAX_ACTION_MS, MAX_ACTIONS, MAX_SCROLL_TIMES, needsBrowser, type ActionLimits, type BrowserWork, type PageCaptures } from './fetch/browser-work.ts';
export { containBrowser, DEFAULT_BROWSER_USER, type BrowserContainment, type BrowserSandboxStatus, type OsUser } from './fetch/browser-containment.ts';
export { statusError } from './fetch/status-error.ts';
export { parseRetryAfter } from './fetch/retry-after.ts';

// request options (headers, user agent, locale, cookies)
export { mergeRequestOptions, hasRequestOptions, requestOptionsKey, acceptLanguageOf, NO_REQUEST_OPTIONS, type RequestOptions, type SpecRequestOptions } from '@trawl/schemas';
export { checkRequestOptions, domainCovers, REQUEST_OPTION_LIMITS, type RequestOptionsCode, type RequestOptionsProblem } from './request/check-request-options.ts';
export { checkReachOptions, type ReachCheckContext, type ReachOptionsCode, type ReachOptionsInput, type ReachOptionsProblem } from './request/check-reach-options.ts';
export { actionsProblem, paginationProblem, type ActionInput, type ActionsCode, type ActionsProblem } from './request/check-actions.ts';
export { requestProfileOf, type RequestProfile, type BrowserCookie } from './request/request-profile.ts';
export { openSpecCredentials, type CredentialOpener } from './request/credentials.ts';
export { userAgentFromEnv, defaultUserAgent, productTokenOf, DEFAULT_CONTACT_URL, type UserAgentConfig } from './request/user-agent.ts';

// the HTTP cache
export { planCacheUse, isFresh, type CachePlan, type CachePlanInput } from './cache/cache-plan.ts';
export { conditionalHeaders, hasValidator, parseEtag, parseLastModified, revalidated, validatorsOf, NO_VALIDATORS, type HttpValidators } from './cache/validators.ts';

// politeness
export { RobotsCache, type RobotsCacheOptions, type RobotsFetcher, type RobotsRequestOptions, type RobotsVerdict } from './politeness/robots.ts';
export { parseRobots, type RobotsRules } from './politeness/robots-parser.ts';
export { HostLimiter, hostLimiterOptionsFromEnv, hostPolicyOf, type HostLimiterOptions, type HostPolicy, type AcquireOptions, type Release } from './politeness/host-limiter.ts';
export { AutoThrottle, autoThrottleOptionsFromEnv, throttleBoundsOf, type AutoThrottleOptions, type ThrottleBounds, type ThrottleChoice, type ThrottleOutcome } from './politeness/auto-throttle.ts';
export { ThrottleReports, worthReporting, type ThrottleReportOptions, type ThrottleSettingReport } from './politeness/throttle-reports.ts';
// blocks
export { BlockClassifier, blockClassifierOptionsFromEnv, compileBlockPatterns, BLOCK_RULES, MAX_BLOCK_PATTERNS, MAX_BLOCK_PATTERN_LENGTH, type BlockClassifierOptions, type BlockInput, type BlockRule, type BlockVerdict } from './blocks/block-classifier.ts';

// parsing
export { parsePage, parseLimitsFromEnv, DEFAULT_PARSE_LIMITS, type PageCut, type ParsePageInput, type ParsedPage, type ParseLimits } from './parse/parse-page.ts';
export { itemIndexOf, itemKey } from './parse/item-key.ts';
export type { ExtractedItem } from './parse/extract-items.ts';

// sitemaps
export { SitemapReader, isSiteRoot, wantsSitemaps, type SitemapDiscovery, type SitemapDocument, type SitemapFetcher, type SitemapReaderDeps } from './sitemap/sitemap-reader.ts';
export { DEFAULT_SITEMAP_LIMITS, sitemapLimitsFromEnv, type SitemapLimits } from './sitemap/sitemap-limits.ts';
export { parseSitemap, type ParsedSitemap, type ParseSitemapOptions } from './sitemap/sitemap-parser.ts';
export { sitemapBody, isGzip, type SitemapBody } from './sitemap/sitemap-body.ts';

// frontier
export { decide, decideAll, type Decision, type DecideOptions, type DeadlineTick, type FrontierEvent, type FrontierEmit, type ReextractSeed } from './frontier/decide.ts';
export { FETCH_LOST, initialFrontierState, isTerminal, type FrontierState, type FrontierStatus, type FrontierCounters, type OutstandingFetch, type QueuedFetch } from './frontier/frontier-state.ts';
export { jobEventId, type JobEventKind, type JobEventIdParts } from './frontier/event-ids.ts';

// worker
export { bySpecReference, canonicalJson, specHash, withInlineSpec, type FetchWithSpec } from './spec/spec-reference.ts';
export { PageProcessor, type CachedBodies, type DerivedFormats, type PageProcessorDeps, type ParseJob, type ParseStep, type ProcessedPage } from './worker/page-processor.ts';
export type { DownloadDeps, DownloadedFile } from './worker/file-download.ts';
export type { PageFetcher } from './fetch/page-fetcher.ts';
export { documentLimitsFromEnv, DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from './fetch/document-limits.ts';
export { downloadLinks, downloadTypeMatches } from './parse/download-links.ts';
export { isPdfType } from './fetch/content-type.ts';
export { RulesCache } from './worker/rules-cache.ts';
export { lazyBrowserFetcher } from './worker/lazy-browser.ts';
export { pageEvents, pageFailedEvent, type PageEventOptions, type PageEvents, type StoredContent } from './worker/worker-events.ts';
export { boundItem, boundLinks, itemExtractedBytes, pageFetchedBytes, truncateUtf8, RECORD_RESERVE_BYTES } from './worker/event-bounds.ts';
export { crawlInMemory, type InMemoryCrawlResult } from './worker/in-memory-crawl.ts';

// structured data and near-duplicates
export { extractMetadata, DEFAULT_METADATA_LIMITS, type MetadataLimits, type PageMetadata } from './parse/page-metadata.ts';
export type { MicrodataItem } from './parse/microdata.ts';
export { simhash, hammingDistance } from './dedupe/simhash.ts';
export { NearDuplicates, nearDuplicateDistanceFromEnv, itemsDigest, DEFAULT_NEAR_DUPLICATE_DISTANCE, type NearDuplicateOptions, type NearDuplicateVerdict } from './dedupe/near-duplicates.ts';

// sessions and logins
export { SessionPool, poolSizeOf, sessionOf, type LeaseOptions, type LoginState, type SessionEvent, type SessionLease, type SessionPoolDeps, type SessionState, type SessionStore } from './session/session-pool.ts';
export { SessionJar } from './session/session-jar.ts';
export { logIn, type BrowserLogin, type LoginDeps, type LoginHttp, type OpenSealed } from './session/form-login.ts';
export { browserLogin, type LoginBrowser } from './session/browser-login.ts';
export { findLoginForm, formBody, type LoginForm } from './session/login-form.ts';
export { loginProblem, type LoginAnswer } from './session/login-check.ts';
