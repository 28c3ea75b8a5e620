/**
 * Lists a plain GET does not give whole: what the browser's actions and the `infinite_scroll` and
 * `load_more` pagination types are for.
 *
 * - `/lists/scroll`: the first page of items is in the HTML; the rest load by script, a JSON page at
 *   a time (`/lists/scroll/items?page=N`), when the reader scrolls near the bottom.
 * - `/lists/more`: the first page is in the HTML; a "Load more" button fetches the next page as an
 *   HTML fragment (`/lists/more/items?page=N`) and is removed after the last one.
 * - `/lists/search`: a form that shows its results only after the query is typed and sent (Enter),
 *   for actions run in order (wait_for, type, press, click).
 *
 * Each list has {@link LIST_TOTAL} items in pages of {@link LIST_PAGE_SIZE}, every item an
 * `li.item` with its name in `.name`: a crawl that reached the end extracted every name in
 * {@link expectedDynamicLists}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

export const LIST_TOTAL = 60;
export const LIST_PAGE_SIZE = 10;
const PAGES = Math.ceil(LIST_TOTAL / LIST_PAGE_SIZE);
/** Each script-loaded page answers after this long, as a real API would: a crawler that does not wait for it misses items. */
const FRAGMENT_DELAY_MS = 40;

function names(list: 'scroll' | 'more'): string[] {
  const label = list === 'scroll' ? 'Scroll item' : 'More item';
  return Array.from({ length: LIST_TOTAL }, (_, i) => `${label} ${i + 1}`);
}

/** What a complete crawl of each list gives: the item selector, and every item's name. */
export const expectedDynamicLists = {
  itemSelector: 'li.item',
  nameSelector: '.name',
  scroll: { path: '/lists/scroll', names: names('scroll') },
  more: { path: '/lists/more', names: names('more'), loadMoreSelector: '#load-more' },
  search: { path: '/lists/search', query: 'trawl', resultSelector: '#results li', results: ['trawl result 1', 'trawl result 2', 'trawl result 3'] },
} as const;

function page(list: 'scroll' | 'more', n: number): string[] {
  return names(list).slice((n - 1) * LIST_PAGE_SIZE, n * LIST_PAGE_SIZE);
}

const itemHtml = (name: string) => `<li class="item"><span class="name">${escapeHtml(name)}</span></li>`;

// Items are tall so that one page of them is taller than a viewport: loading more needs scrolling.
const STYLE = '<style>li.item{height:90px;border-bottom:1px solid #ccc}</style>';

const SCROLL_PAGE = `<!doctype html><html><head><title>Infinite scroll</title>${STYLE}</head><body>
<h1>Infinite scroll</h1><ul id="feed">${page('scroll', 1).map(itemHtml).join('')}</ul><p id="status">more below</p>
<script>
let next = 2, loading = false;
async function more() {
  if (loading || next === null) return;
  if (window.innerHeight + window.scrollY < document.body.scrollHeight - 300) return;
  loading = true;
  const answer = await (await fetch('/lists/scroll/items?page=' + next)).json();
  const feed = document.getElementById('feed');
  for (const name of answer.items) {
    const li = document.createElement('li'); li.className = 'item';
    const span = document.createElement('span'); span.className = 'name'; span.textContent = name;
    li.appendChild(span); feed.appendChild(li);
  }
  next = answer.next;
  if (next === null) document.getElementById('status').textContent = 'the end';
  loading = false;
  more();
}
window.addEventListener('scroll', more, { passive: true });
</script></body></html>`;

const MORE_PAGE = `<!doctype html><html><head><title>Load more</title>${STYLE}</head><body>
<h1>Load more</h1><ul id="list">${page('more', 1).map(itemHtml).join('')}</ul><button id="load-more" type="button">Load more</button>
<script>
let next = 2;
document.getElementById('load-more').addEventListener('click', async (e) => {
  const button = e.currentTarget;
  button.disabled = true;
  const answer = await fetch('/lists/more/items?page=' + next);
  document.getElementById('list').insertAdjacentHTML('beforeend', await answer.text());
  next = Number(answer.headers.get('x-next-page')) || null;
  if (next === null) button.remove(); else button.disabled = false;
});
</script></body></html>`;

const SEARCH_PAGE = `<!doctype html><html><head><title>Search</title></head><body>
<h1>Search</h1><form id="search"><input id="q" name="q" autocomplete="off"><button type="submit">Search</button></form>
<label><input type="checkbox" id="exact"> exact</label><ul id="results"></ul><p id="typed"></p>
<script>
document.getElementById('search').addEventListener('submit', (e) => {
  e.preventDefault();
  const q = document.getElementById('q').value;
  const exact = document.getElementById('exact').checked;
  setTimeout(() => {
    document.getElementById('results').innerHTML = [1, 2, 3].map((i) => '<li>' + q + ' result ' + i + '</li>').join('');
    document.getElementById('typed').textContent = 'query=' + q + ' exact=' + exact;
  }, 50);
});
</script></body></html>`;

const INDEX_PAGE = `<!doctype html><html><head><title>Dynamic lists</title></head><body><ul>
<li><a href="/lists/scroll">Infinite scroll</a></li><li><a href="/lists/more">Load more</a></li><li><a href="/lists/search">Search</a></li></ul></body></html>`;

function pageNumber(url: URL): number | null {
  const n = Number(url.searchParams.get('page'));
  return Number.isInteger(n) && n >= 2 && n <= PAGES ? n : null;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const dynamicLists: HardSiteFeature = {
  prefix: '/lists/',
  entry: '/lists/',
  async handle(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    switch (url.pathname) {
      case '/lists/':
        return html(res, 200, INDEX_PAGE);
      case '/lists/scroll':
        return html(res, 200, SCROLL_PAGE);
      case '/lists/more':
        return html(res, 200, MORE_PAGE);
      case '/lists/search':
        return html(res, 200, SEARCH_PAGE);
      case '/lists/scroll/items': {
        const n = pageNumber(url);
        if (n === null) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such page"}');
        await delay(FRAGMENT_DELAY_MS);
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ items: page('scroll', n), next: n < PAGES ? n + 1 : null }));
        return;
      }
      case '/lists/more/items': {
        const n = pageNumber(url);
        if (n === null) return html(res, 404, '');
        await delay(FRAGMENT_DELAY_MS);
        html(res, 200, page('more', n).map(itemHtml).join(''), { 'cache-control': 'no-store', ...(n < PAGES ? { 'x-next-page': String(n + 1) } : {}) });
        return;
      }
      default:
        return html(res, 404, '<!doctype html><title>Not found</title>');
    }
  },
};
