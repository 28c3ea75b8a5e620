/** Every event of Trawl, by its Avro record name. */
export const EVENT_NAMES = [
  'TargetDue',
  'CrawlRequested',
  'JobDispatched',
  'FetchRequested',
  'PageFetched',
  'PageFailed',
  'PageChanged',
  'ItemExtracted',
  'JobCompleted',
  'JobFailed',
  'JobCancelled',
  'JobPaused',
  'JobResumed',
  'SessionUpdated',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export const NAMESPACE = 'dev.trawl.events';

export function fullName(name: EventName): string {
  return `${NAMESPACE}.${name}`;
}

export function isEventName(value: string): value is EventName {
  return (EVENT_NAMES as readonly string[]).includes(value);
}
