/** Targets (a website plus what to search) and the websites they use; create a target here. */
import { client, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import { actionButton, empty, errorText, notice, pageHeader, table } from '../ui.ts';

export async function targetsView(outlet: HTMLElement): Promise<void> {
  const targetsBox = h('div', { id: 'targets' });
  const websitesBox = h('div', { id: 'websites' });
  const message = h('div');
  const website = h('select', { id: 'target-website', required: true });
  const name = h('input', { id: 'target-name', placeholder: 'name' });
  const template = h('input', { id: 'target-url', required: true, placeholder: 'https://site/search?q={keywords}&l={location}', size: 50 });
  const keywords = h('input', { id: 'target-keywords', placeholder: 'keywords, comma separated' });
  const location = h('input', { id: 'target-location', placeholder: 'location' });

  async function load(): Promise<void> {
    try {
      const [{ targets }, { websites }] = await Promise.all([ok(client.GET('/targets')), ok(client.GET('/websites'))]);
      replace(
        targetsBox,
        targets.length === 0
          ? empty('No targets yet.')
          : table(
              ['Target', 'Website', 'Search URL', 'Keywords', 'Active', ''],
              targets.map((t) => [
                t.name ?? t.id,
                t.website_id,
                h('span', { class: 'url' }, t.search_url),
                t.keywords.join(', ') || '–',
                t.active ? 'yes' : 'no',
                h(
                  'span',
                  { class: 'actions' },
                  h('a', { class: 'button small ghost', href: `#/crawl?url=${encodeURIComponent(t.search_url)}&spider=${encodeURIComponent(t.website_id)}` }, 'Crawl now'),
                  t.active
                    ? actionButton('Deactivate', async () => {
                        await ok(client.DELETE('/targets/{id}', { params: { path: { id: t.id } } }));
                        await load();
                      }, { class: 'button small danger' })
                    : null,
                ),
              ]),
            ),
      );
      replace(
        websitesBox,
        websites.length === 0
          ? empty('No websites.')
          : table(
              ['Website', 'Id', 'Base URL', 'Items', 'Depth', 'Max pages', 'Browser', 'Owner'],
              websites.map((w) => [w.name, h('span', { class: 'mono' }, w.id), h('span', { class: 'url' }, w.base_url), w.item_root ?? '–', String(w.max_depth), String(w.max_pages), w.requires_browser ? 'yes' : 'no', w.shared ? 'shared' : 'you']),
            ),
      );
      const chosen = website.value;
      replace(website, ...websites.map((w) => h('option', { value: w.id, selected: w.id === chosen }, `${w.name} (${w.id})`)));
    } catch (err) {
      replace(targetsBox, notice('error', errorText(err)));
    }
  }

  const form = h('form', { class: 'card form inline', id: 'target-form' }, h('h2', {}, 'New target'), website, name, template, keywords, location, h('button', { type: 'submit', class: 'button primary' }, 'Create'), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.replaceChildren();
    try {
      await ok(
        client.POST('/targets', {
          body: {
            website_id: website.value,
            url_template: template.value.trim(),
            ...(name.value.trim() ? { name: name.value.trim() } : {}),
            keywords: keywords.value.split(',').map((k) => k.trim()).filter(Boolean),
            ...(location.value.trim() ? { location: location.value.trim() } : {}),
          },
        }),
      );
      form.reset();
      await load();
    } catch (err) {
      message.append(notice('error', errorText(err)));
    }
  });
  outlet.append(pageHeader('Targets'), targetsBox, form, h('h2', {}, 'Websites'), websitesBox);
  await load();
}
