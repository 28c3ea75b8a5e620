/** The worker process (worker.ts). */
import { runService } from '@trawl/streams';
import { startWorker } from './worker.ts';

await runService('worker', (logger) => startWorker(logger));
