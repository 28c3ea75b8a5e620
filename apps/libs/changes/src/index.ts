export { baselineOf, namedBaseline, type Baseline, type ScheduleRun } from './baseline.ts';
export { ChangeListing, type ChangeLists, type ListBounds } from './change-listing.ts';
export { compareItems, ITEM_CHANGE_KINDS, type IndexOf, type ItemChange, type ItemChangeKind, type ItemComparison, type RunItem } from './compare-items.ts';
export { comparePage, comparePages, PAGE_CHANGE_KINDS, pageChange, type PageChange, type PageChangeKind, type RunPage } from './compare-pages.ts';
export { DEFAULT_LIST_BOUNDS, jobChanges, type JobChanges, type JobChangesAnswer, type JobChangesOptions } from './job-changes.ts';
export { PageChangeDetector, type FetchedPage, type PageChangeDecision } from './page-change-detector.ts';
export type { Connect, Db } from './sql-cursor.ts';
