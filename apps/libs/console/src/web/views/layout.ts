/** The frame around every signed-in view: navigation, who is signed in, sign out. */
import { client, ok, session } from '../api.ts';
import { h } from '../dom.ts';
import { navigate } from '../router.ts';

const LINKS: readonly [string, string, string][] = [
  ['jobs', '#/jobs', 'Jobs'],
  ['crawl', '#/crawl', 'New crawl'],
  ['scrape', '#/scrape', 'Scrape'],
  ['metrics', '#/metrics', 'Metrics'],
  ['dead-letters', '#/dead-letters', 'Dead letters'],
  ['schedules', '#/schedules', 'Schedules'],
  ['targets', '#/targets', 'Targets'],
];

export interface Layout {
  readonly root: HTMLElement;
  readonly outlet: HTMLElement;
  /** Marks the current section and shows or hides the frame (sign-in has none). */
  setRoute(name: string): void;
}

export function createLayout(): Layout {
  const user = h('span', { class: 'user', id: 'current-user' });
  const links = LINKS.map(([name, href, label]) => h('a', { href, 'data-route': name }, label));
  const signOut = h('button', { type: 'button', class: 'button ghost', id: 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', () => {
    session.clear();
    sessionStorage.removeItem('trawl.user');
    navigate('/login');
  });
  const nav = h('nav', { class: 'topbar', 'aria-label': 'Main' }, h('a', { class: 'brand', href: '#/jobs' }, '▾ Trawl'), h('div', { class: 'links' }, ...links), h('div', { class: 'who' }, user, signOut));
  const outlet = h('main', { class: 'content', id: 'main' });
  const root = h('div', { class: 'shell' }, nav, outlet);

  async function showUser(): Promise<void> {
    let name = sessionStorage.getItem('trawl.user');
    if (!name && session.key()) {
      name = (await ok(client.GET('/me')).catch(() => ({ user_id: '' }))).user_id;
      if (name) sessionStorage.setItem('trawl.user', name);
    }
    user.textContent = name ?? '';
  }

  return {
    root,
    outlet,
    setRoute(name) {
      nav.hidden = name === 'login';
      for (const a of links) a.classList.toggle('active', a.dataset.route === name || (name === 'job' && a.dataset.route === 'jobs'));
      if (name !== 'login') void showUser();
    },
  };
}
