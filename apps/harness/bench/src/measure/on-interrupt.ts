/**
 * Ctrl-C (or SIGTERM) during a bench stops what it started — the pipeline's services, the site
 * server, a contender — instead of leaving them running and consuming the CPU the next run measures.
 */
const cleanups = new Set<() => Promise<void>>();
let installed = false;

/** Registers `fn` to run on interrupt; the returned function unregisters it. */
export function onInterrupt(fn: () => Promise<void>): () => void {
  if (!installed) {
    installed = true;
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`  · ${signal}: stopping what the bench started\n`);
      void Promise.allSettled([...cleanups].map((c) => c())).finally(() => process.exit(130));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}
