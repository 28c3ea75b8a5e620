/**
 * One page's work where pages are parsed (a parse thread, or the main thread with
 * TRAWL_PARSE_THREADS=0): its links and items (parsePage) and, when the job keeps them, its text
 * and Markdown (@trawl/content derive) — an HTML page's whole body or main content
 * (only_main_content), a PDF's text. Deriving is done here, not where the page is stored, because
 * its cost grows with the page as a parse's does (Readability over a 100 KB page: ~9–30 ms with
 * linkedom; a PDF's text: tens of ms a page), so it must run under the same time limit, off the
 * worker's main thread. A PDF that cannot be read gives no text: the page is kept without it.
 *
 * The derivers (linkedom, Readability, turndown; PDF.js) are loaded by the first page that needs
 * them ({@link loadDerivers}), not with the thread: a thread that only parses keeps its heap for
 * pages (TRAWL_PARSE_THREAD_MEMORY_MB), and a parse thread loads them before its parse's clock
 * starts, so no page's time limit pays for a load.
 */
import { parsePage, type DerivedFormats, type ParseJob, type ParsedPage, type RulesCache } from '@trawl/crawl/parse';

export type ParsedWork = Pick<ParsedPage, 'links' | 'nextPage' | 'canonical' | 'items' | 'cut' | 'metadata' | 'simhash' | 'downloads'> & { readonly derived: DerivedFormats | null };

type Derivers = typeof import('@trawl/content/derive');

const NOTHING: Omit<ParsedWork, 'derived'> = { links: [], nextPage: null, canonical: null, items: [], cut: null, metadata: null, simhash: null, downloads: [] };

let derivers: Promise<Derivers> | undefined;
let pdfEngine: Promise<void> | undefined;

/** Loads what `job` needs to derive its formats (nothing for a job that keeps no text); once per thread. */
export async function loadDerivers(job: Pick<ParseJob, 'derive' | 'document'>): Promise<void> {
  if (!job.derive && !job.document) return;
  const loaded = await (derivers ??= import('@trawl/content/derive'));
  if (job.document) await (pdfEngine ??= loaded.loadPdfEngine());
}

export async function parseWork(job: ParseJob, rules: RulesCache): Promise<ParsedWork> {
  await loadDerivers(job);
  if (job.document) {
    try {
      const doc = await (await derivers!).derivePdf(job.document.data, { maxPages: job.document.maxPages });
      return { ...NOTHING, derived: { text: doc.text, markdown: doc.markdown, pages: doc.pages, pagesRead: doc.pagesRead } };
    } catch {
      return { ...NOTHING, derived: null };
    }
  }
  const page = parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, rules: rules.get(job.jobId, job.spec), limits: job.limits });
  const derived = job.derive ? (await derivers!).derivePage(job.html, job.finalUrl, { mainContent: job.derive.mainContent }) : null;
  return {
    links: page.links, nextPage: page.nextPage, canonical: page.canonical, items: page.items, cut: page.cut, metadata: page.metadata, simhash: page.simhash, downloads: page.downloads,
    derived: derived ? { text: derived.text, markdown: derived.markdown } : null,
  };
}
