/**
 * Hash routes (`#/jobs/<id>?tab=items`): the server only ever serves `/`, and a reload or a
 * shared link lands on the same view. A view renders into the outlet and returns its cleanup
 * (sockets, timers, charts), run before the next view.
 */

export type Cleanup = () => void;
export type View = (outlet: HTMLElement, params: Readonly<Record<string, string>>, query: URLSearchParams) => Cleanup | void | Promise<Cleanup | void>;

interface Route {
  readonly pattern: RegExp;
  readonly keys: readonly string[];
  readonly view: View;
  readonly name: string;
}

export class Router {
  private readonly routes: Route[] = [];
  private cleanup: Cleanup | undefined;
  private generation = 0;

  constructor(
    private readonly outlet: HTMLElement,
    private readonly onRoute: (name: string) => void,
  ) {
    window.addEventListener('hashchange', () => void this.render());
  }

  add(path: string, name: string, view: View): this {
    const keys: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, k: string) => (keys.push(k), '([^/]+)'))}$`);
    this.routes.push({ pattern, keys, view, name });
    return this;
  }

  async render(): Promise<void> {
    const generation = ++this.generation;
    const [path = '/', search = ''] = (location.hash.replace(/^#/, '') || '/jobs').split('?');
    this.cleanup?.();
    this.cleanup = undefined;
    for (const r of this.routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      const params = Object.fromEntries(r.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      this.onRoute(r.name);
      this.outlet.replaceChildren();
      const cleanup = await r.view(this.outlet, params, new URLSearchParams(search));
      // A later navigation won the race while this view was loading: undo this one.
      if (generation !== this.generation) cleanup?.();
      else this.cleanup = cleanup ?? undefined;
      return;
    }
    navigate('/jobs');
  }
}

export function navigate(path: string, query?: Record<string, string | number | undefined | null>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  location.hash = `#${path}${s ? `?${s}` : ''}`;
}

/** Rewrites the query of the current route without a navigation (filters, ranges). */
export function replaceQuery(query: Record<string, string | number | undefined | null>): void {
  const [path = '/'] = location.hash.replace(/^#/, '').split('?');
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  history.replaceState(null, '', `#${path}${s ? `?${s}` : ''}`);
}
