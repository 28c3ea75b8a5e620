/**
 * A site whose latency rises with load, for the adaptive-throttling bench: a page answers after
 * `baseMs + perInFlightMs × (requests in flight, itself included)`, and a request arriving while
 * `cap` are already in flight is answered 503 at once (no Retry-After, as an overloaded server
 * does). The home page links every page (`/p/1` … `/p/{pages−1}`), so a crawler can have as
 * many in flight as it wants; robots.txt is 404 and not counted.
 *
 * Pages per second at a steady `c` in flight is `c / (baseMs + perInFlightMs × c)`: it rises with
 * `c` ever more slowly, and past `cap` every extra request is an error — there is a best setting,
 * and it is not "as many as allowed".
 */
import { html, serve, type RunningServer } from './serve.ts';

export interface LoadedSiteOptions {
  readonly pages?: number;
  readonly baseMs?: number;
  readonly perInFlightMs?: number;
  /** Requests in flight past which a new one is answered 503. */
  readonly cap?: number;
  readonly port?: number;
}

export interface LoadedSite extends RunningServer {
  readonly home: string;
  readonly pages: number;
  /** Answers so far: 200s, 503s, and the most in flight at once. */
  stats(): { ok: number; errors: number; maxInFlight: number };
  /** Starts the counts over (between runs of a bench). */
  resetStats(): void;
}

export async function createLoadedSite(options: LoadedSiteOptions = {}): Promise<LoadedSite> {
  const pages = options.pages ?? 400;
  const baseMs = options.baseMs ?? 20;
  const perInFlightMs = options.perInFlightMs ?? 10;
  const cap = options.cap ?? 12;
  let inFlight = 0;
  let ok = 0;
  let errors = 0;
  let maxInFlight = 0;
  const filler = '<p>' + 'Load-dependent latency page text. '.repeat(60) + '</p>';
  const links = Array.from({ length: pages - 1 }, (_, i) => `<a href="/p/${i + 1}">page ${i + 1}</a>`).join(' ');
  const server = await serve(
    (_req, res, url) => {
      if (url.pathname === '/robots.txt') return void res.writeHead(404).end();
      if (url.pathname !== '/' && !/^\/p\/\d+$/.test(url.pathname)) return html(res, 404, '<!doctype html><title>Not found</title>');
      if (inFlight >= cap) {
        errors++;
        return html(res, 503, '<!doctype html><title>Service Unavailable</title><p>Too busy.</p>');
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const latency = baseMs + perInFlightMs * inFlight;
      setTimeout(() => {
        inFlight--;
        ok++;
        html(res, 200, `<!doctype html><html><head><title>${url.pathname}</title></head><body><h1>${url.pathname}</h1>${filler}${url.pathname === '/' ? links : ''}</body></html>`);
      }, latency);
    },
    { port: options.port },
  );
  return {
    ...server,
    bytesSent: () => server.bytesSent(),
    close: () => server.close(),
    home: `${server.origin}/`,
    pages,
    stats: () => ({ ok, errors, maxInFlight }),
    resetStats() {
      ok = 0;
      errors = 0;
      maxInFlight = 0;
    },
  };
}
