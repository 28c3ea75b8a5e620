/** What the worker's main thread and its parse threads say to each other (structured-cloned). */
import type { ExtractedItem, PageCut, ParseJob } from '@trawl/crawl';

/** A page to parse (the crawl's ParseJob: rules are compiled once per job on each thread) and its reply id. */
export interface ParseRequest extends ParseJob {
  readonly id: number;
}

/** Sent once by a thread when it has loaded and listens. */
export interface ThreadReady {
  readonly ready: true;
}

export type ParseReply =
  | { readonly id: number; readonly ok: true; readonly links: string[]; readonly nextPage: string | null; readonly items: ExtractedItem[]; readonly cut: PageCut | null }
  | { readonly id: number; readonly ok: false; readonly name: string; readonly message: string; readonly retriable: boolean | null };
