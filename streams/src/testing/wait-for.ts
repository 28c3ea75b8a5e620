/** Polls until `probe` returns something truthy; fails with `message` (and the last value) after the timeout. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  { timeoutMs = 30_000, intervalMs = 50, message = 'condition' }: { timeoutMs?: number; intervalMs?: number; message?: string | (() => string) } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (last) return last as NonNullable<T>;
    if (Date.now() >= deadline) {
      const what = typeof message === 'function' ? message() : message;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
