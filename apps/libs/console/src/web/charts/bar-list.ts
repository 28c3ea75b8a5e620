/**
 * A breakdown as a table whose main column carries a bar: top hosts, errors by kind and host,
 * status codes, consumer lag. Easier to read (and to select and copy) than a pie, and exact.
 */
import { h } from '../dom.ts';

export interface BarColumn<R> {
  readonly label: string;
  readonly value: (row: R) => string | number | Node;
  readonly numeric?: boolean;
}

export interface BarListOptions<R> {
  readonly id: string;
  readonly title: string;
  readonly rows: readonly R[];
  /** The column drawn as a bar, and its value. */
  readonly bar: { readonly label: string; readonly value: (row: R) => number; readonly format: (v: number) => string; readonly tone?: 'ok' | 'bad' };
  readonly columns: readonly BarColumn<R>[];
  readonly emptyText?: string;
  readonly note?: string;
}

export function barList<R>(o: BarListOptions<R>): HTMLElement {
  const max = Math.max(0, ...o.rows.map(o.bar.value));
  const body =
    o.rows.length === 0
      ? h('p', { class: 'empty' }, o.emptyText ?? 'Nothing in this range')
      : h(
          'table',
          { class: 'table bar-list' },
          h('thead', {}, h('tr', {}, ...o.columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : '' }, c.label)), h('th', { scope: 'col', class: 'bar-col' }, o.bar.label))),
          h(
            'tbody',
            {},
            ...o.rows.map((r) => {
              const v = o.bar.value(r);
              const fill = h('span', { class: `bar-fill bar-${o.bar.tone ?? 'ok'}` });
              fill.style.width = `${max > 0 ? (100 * v) / max : 0}%`;
              return h(
                'tr',
                {},
                ...o.columns.map((c) => h('td', { class: c.numeric ? 'num' : '' }, c.value(r))),
                h('td', { class: 'bar-col' }, h('span', { class: 'bar' }, fill), h('span', { class: 'bar-value' }, o.bar.format(v))),
              );
            }),
          ),
        );
  return h('section', { class: 'panel', id: `panel-${o.id}`, 'data-rows': o.rows.length }, h('h3', {}, o.title), o.note ? h('p', { class: 'hint' }, o.note) : null, body);
}
