/**
 * Sign-in with an API key (`npx trawl keys create <user>` prints one). The key is checked with
 * `GET /me` before it is stored, so a typo never "signs in".
 */
import { client, ok, session } from '../api.ts';
import { h } from '../dom.ts';
import { navigate } from '../router.ts';
import { errorText, notice } from '../ui.ts';

export function loginView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): void {
  const input = h('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'current-password', required: true, placeholder: 'trawl_…', spellcheck: 'false' });
  const message = h('div', { class: 'form-message' });
  const form = h(
    'form',
    { class: 'login card', id: 'login-form' },
    h('h1', {}, 'Sign in to Trawl'),
    h('p', { class: 'hint' }, 'Paste an API key. Create one with ', h('code', {}, 'npx trawl keys create <user>'), '.'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('button', { type: 'submit', class: 'button primary', id: 'login-submit' }, 'Sign in'),
    message,
    h('p', { class: 'hint small' }, 'The key is kept in this browser (localStorage) until you sign out.'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = input.value.trim();
    message.replaceChildren();
    try {
      const me = await ok(client.GET('/me', { headers: { authorization: `Bearer ${key}` } }));
      session.set(key);
      sessionStorage.setItem('trawl.user', me.user_id);
      navigate(query.get('next') ?? '/jobs');
    } catch (err) {
      message.append(notice('error', errorText(err)));
    }
  });
  outlet.append(h('div', { class: 'login-page' }, form));
  input.focus();
}
