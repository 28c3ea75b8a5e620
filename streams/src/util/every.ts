/**
 * A gate that opens at most once per `ms`: for a warning about a condition that may hold for every
 * message (a store down, a read model missing), said once a minute instead of once a message.
 */
export function onceEvery(ms: number, now: () => number = Date.now): () => boolean {
  let last = -Infinity;
  return () => {
    const t = now();
    if (t - last < ms) return false;
    last = t;
    return true;
  };
}
