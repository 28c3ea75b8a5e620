/** The hard site's dynamic lists over plain HTTP: what a GET gives (the first page only) and the pages their scripts fetch. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, type HardSite } from './index.ts';
import { expectedDynamicLists, LIST_PAGE_SIZE, LIST_TOTAL } from './dynamic-lists.ts';

let site: HardSite;
beforeAll(async () => {
  site = await createHardSite({ host: '127.0.0.1' });
});
afterAll(async () => {
  await site?.close();
});

const get = (path: string) => fetch(`${site.origin}${path}`);
const names = (html: string) => [...html.matchAll(/<span class="name">([^<]*)<\/span>/g)].map((m) => m[1]);

describe('dynamic lists', () => {
  it('are linked from the home page', async () => {
    expect(await (await get('/')).text()).toContain('href="/lists/"');
    const index = await (await get('/lists/')).text();
    for (const path of [expectedDynamicLists.scroll.path, expectedDynamicLists.more.path, expectedDynamicLists.search.path]) expect(index).toContain(`href="${path}"`);
  });

  it('give a plain GET the first page only; the scroll list loads the rest as JSON', async () => {
    expect(names(await (await get(expectedDynamicLists.scroll.path)).text())).toEqual(expectedDynamicLists.scroll.names.slice(0, LIST_PAGE_SIZE));
    const pages: string[] = [];
    for (let n: number | null = 2; n !== null; ) {
      const answer = (await (await get(`/lists/scroll/items?page=${n}`)).json()) as { items: string[]; next: number | null };
      pages.push(...answer.items);
      n = answer.next;
    }
    expect(pages).toEqual(expectedDynamicLists.scroll.names.slice(LIST_PAGE_SIZE));
    expect((await get('/lists/scroll/items?page=99')).status).toBe(404);
  });

  it('the load-more list answers HTML fragments, the last without a next page', async () => {
    expect(names(await (await get(expectedDynamicLists.more.path)).text())).toHaveLength(LIST_PAGE_SIZE);
    const last = await get(`/lists/more/items?page=${LIST_TOTAL / LIST_PAGE_SIZE}`);
    expect(last.headers.get('x-next-page')).toBeNull();
    expect(names(await last.text())).toEqual(expectedDynamicLists.more.names.slice(-LIST_PAGE_SIZE));
    expect((await get('/lists/more/items?page=2')).headers.get('x-next-page')).toBe('3');
  });
});
