/** Small building blocks shared by the views: badges, progress bars, notices, buttons, tables. */
import { h } from './dom.ts';
import { ApiRequestError } from './api.ts';

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}`, 'data-status': status }, status);
}

export function progressBar(percent: number, label?: string): HTMLElement {
  const bar = h('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': percent });
  const fill = h('div', { class: 'progress-fill' });
  // CSSOM, not a style attribute: the page's CSP refuses inline style attributes.
  fill.style.width = `${Math.max(0, Math.min(100, percent))}%`;
  bar.append(fill);
  if (label) bar.append(h('span', { class: 'progress-label' }, label));
  return bar;
}

export function notice(kind: 'error' | 'info' | 'warn', ...text: (string | Node)[]): HTMLElement {
  return h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...text);
}

export function errorText(err: unknown): string {
  if (err instanceof ApiRequestError) return `${err.message}${err.code && err.code !== `HTTP_${err.status}` ? ` (${err.code})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

export function pageHeader(title: string, ...actions: (Node | string)[]): HTMLElement {
  return h('header', { class: 'page-header' }, h('h1', {}, title), h('div', { class: 'actions' }, ...actions));
}

export function table(headers: readonly string[], rows: readonly (readonly (Node | string | number)[])[], attrs: Record<string, string> = {}): HTMLElement {
  return h(
    'table',
    { class: 'table', ...attrs },
    h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
  );
}

export function empty(text: string): HTMLElement {
  return h('p', { class: 'empty' }, text);
}

/** A button that shows it is busy while its action runs and reports a failure next to itself. */
export function actionButton(label: string, action: () => Promise<unknown>, attrs: Record<string, string> = {}): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'button', ...attrs }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    button.classList.add('busy');
    try {
      await action();
    } catch (err) {
      button.title = errorText(err);
      button.classList.add('failed');
      button.after(h('span', { class: 'inline-error', role: 'alert' }, errorText(err)));
    } finally {
      button.disabled = false;
      button.classList.remove('busy');
    }
  });
  return button;
}
