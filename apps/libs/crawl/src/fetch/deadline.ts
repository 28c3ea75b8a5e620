/**
 * One AbortSignal for "the total deadline passed, or the caller gave up", released explicitly.
 * Hand-rolled rather than AbortSignal.any/timeout: a worker passes the same long-lived shutdown
 * signal to every fetch, and composite signals that hang on to it are a known leak source on Node 20;
 * here the listener and the timer are removed as soon as the fetch ends.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** The deadline (not the caller) fired. */
  expired(): boolean;
  dispose(): void;
}

export function deadline(ms: number, caller?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`deadline of ${ms} ms passed`));
  }, ms);
  const onAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    expired: () => expired,
    dispose: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
