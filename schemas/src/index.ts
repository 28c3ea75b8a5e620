export { EVENT_NAMES, fullName, isEventName, type EventName } from './names.ts';
export type {
  CacheReuse,
  CachedPage,
  CrawlRequested,
  CrawlSpec,
  DownloadSpec,
  EventMap,
  FetchRequested,
  ItemExtracted,
  ItemField,
  FieldTransform,
  FieldTransformType,
  JobCancelled,
  JobCompleted,
  JobDispatched,
  JobFailed,
  JobOutcome,
  JobPaused,
  JobResumed,
  PageChanged,
  PageFailed,
  PageFetched,
  SessionUpdated,
  StoredDownload,
  PaginationType,
  RenderMode,
  BrowserAction,
  BrowserActionType,
  LinkScope,
  LoginKind,
  LoginSpec,
  ProxyRotation,
  ProxySpec,
  TargetDue,
} from './generated/events.ts';
export { eventSchema, allEventSchemas, AVRO_DIR } from './load.ts';
export { samples, sampleSpec } from './samples.ts';
export { backwardProblems, checkSchemas, releasedVersions, canonical, RELEASED_DIR, FIXTURES_DIR } from './compat.ts';
export { avroType, avroTypeOptions } from './avro-type.ts';
export { uuidV5 } from './uuid-v5.ts';
export { TrawlError } from './trawl-error.ts';
export { mergeRequestOptions, mergeReachOptions, DEFAULT_REACH_OPTIONS, type SpecReachOptions, hasRequestOptions, requestOptionsKey, acceptLanguageOf, NO_REQUEST_OPTIONS, type RequestOptions, type SpecRequestOptions } from './request-options.ts';
