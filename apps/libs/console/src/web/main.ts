/**
 * The Trawl console: a single page over the API. Signed out, every route leads to sign-in;
 * signed in, hash routes pick a view (router.ts). No framework: views build DOM with `h()` and
 * clean up their sockets, timers and charts when left.
 */
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { session, whenSignedOut } from './api.ts';
import { Router, navigate } from './router.ts';
import { createLayout } from './views/layout.ts';
import { loginView } from './views/login-view.ts';
import { jobsView } from './views/jobs-view.ts';
import { jobView } from './views/job-view.ts';
import { newCrawlView } from './views/new-crawl-view.ts';
import { scrapeView } from './views/scrape-view.ts';
import { metricsView } from './views/metrics-view.ts';
import { deadLettersView } from './views/dead-letters-view.ts';
import { schedulesView } from './views/schedules-view.ts';
import { targetsView } from './views/targets-view.ts';
import type { View } from './router.ts';

const app = document.getElementById('app')!;
const layout = createLayout();
app.replaceChildren(layout.root);

/** Views that need a key send the user to sign in first, and back afterwards. */
function signedIn(view: View): View {
  return (outlet, params, query) => {
    if (!session.key()) {
      navigate('/login', { next: location.hash.replace(/^#/, '') });
      return;
    }
    return view(outlet, params, query);
  };
}

whenSignedOut(() => {
  session.clear();
  sessionStorage.removeItem('trawl.user');
  navigate('/login', { next: location.hash.replace(/^#/, '') });
});

const router = new Router(layout.outlet, (name) => layout.setRoute(name))
  .add('/login', 'login', loginView)
  .add('/jobs', 'jobs', signedIn(jobsView))
  .add('/jobs/:id', 'job', signedIn(jobView))
  .add('/crawl', 'crawl', signedIn(newCrawlView))
  .add('/scrape', 'scrape', signedIn(scrapeView))
  .add('/metrics', 'metrics', signedIn(metricsView))
  .add('/dead-letters', 'dead-letters', signedIn(deadLettersView))
  .add('/schedules', 'schedules', signedIn(schedulesView))
  .add('/targets', 'targets', signedIn(targetsView));

void router.render();
