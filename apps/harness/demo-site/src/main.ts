import pino from 'pino';
import { createJobBoard } from './job-board.ts';
import { serve } from './serve.ts';

/** The bundled demo job board: `tsx apps/harness/demo-site/src/main.ts` (TRAWL_DEMO_PORT, default 8090; TRAWL_DEMO_HOST, default 127.0.0.1). */
const log = pino({ name: 'demo-site' });
const port = Number(process.env.TRAWL_DEMO_PORT ?? 8090);
const host = process.env.TRAWL_DEMO_HOST ?? '127.0.0.1';
const board = createJobBoard();

const server = await serve((req, res, url) => {
  res.on('finish', () => log.debug({ method: req.method, path: url.pathname + url.search, status: res.statusCode }, 'request'));
  return board(req, res, url);
}, { port, host });
log.info({ url: server.origin }, 'demo job board listening');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'stopping');
    void server.close().then(() => process.exit(0));
  });
}
