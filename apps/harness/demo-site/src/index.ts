export { AccessLog, type AccessEntry } from './access-log.ts';
export { serve, type Handler, type RunningServer } from './serve.ts';
export { createJobBoard, JOB_BOARD_SPEC, ROBOTS_TXT, type JobBoardOptions } from './job-board.ts';
export { listing, type Listing } from './listings.ts';
export { createTestSite, type ExpectedCrawl, type TestSite, type TestSiteOptions, type TrapName } from './test-site.ts';
export { createSitemapSite, type SitemapSite, type SitemapSiteOptions } from './sitemap-site.ts';
