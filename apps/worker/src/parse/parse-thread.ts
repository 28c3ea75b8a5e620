/**
 * A parse thread of the worker: parsePage (htmlparser2 + css-select, links, items and their keys) for
 * pages the main thread fetched. Parsing is most of a page's CPU; on a thread it runs beside the
 * main thread's Kafka I/O, encoding and fetching instead of in turn with them.
 */
import { parentPort } from 'node:worker_threads';
import { CrawlError, parsePage, RulesCache } from '@trawl/crawl';
import type { ParseReply, ParseRequest } from './parse-messages.ts';

const rules = new RulesCache();

parentPort!.on('message', (req: ParseRequest) => {
  let reply: ParseReply;
  try {
    const page = parsePage({ html: req.html, url: req.url, finalUrl: req.finalUrl, rules: rules.get(req.jobId, req.spec), limits: req.limits });
    reply = { id: req.id, ok: true, links: page.links, nextPage: page.nextPage, items: page.items, cut: page.cut };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { id: req.id, ok: false, name: e.name, message: e.message, retriable: err instanceof CrawlError ? err.retriable : null };
  }
  parentPort!.postMessage(reply);
});
// Loaded and listening: the pool's ready() waits for this from every thread.
parentPort!.postMessage({ ready: true });
