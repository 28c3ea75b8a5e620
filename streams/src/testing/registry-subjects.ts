import { endpoints, authHeaders, httpTarget } from '@trawl/base';

/**
 * Deletes the registry subjects whose name starts with `prefix` (soft, then permanent), so test
 * runs leave no subjects behind. Best effort: the registry may refuse deletions.
 */
export async function deleteSubjects(prefix: string, registryUrl: string = endpoints().schemaRegistryUrl): Promise<number> {
  let deleted = 0;
  const base = httpTarget(registryUrl).url.replace(/\/+$/, '');
  const headers = authHeaders(registryUrl);
  try {
    const res = await fetch(`${base}/subjects`, { headers, signal: AbortSignal.timeout(5_000) });
    if (!res.ok) return 0;
    const subjects = ((await res.json()) as string[]).filter((s) => s.startsWith(prefix));
    for (const subject of subjects) {
      const url = `${base}/subjects/${encodeURIComponent(subject)}`;
      await fetch(url, { method: 'DELETE', headers, signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      const hard = await fetch(`${url}?permanent=true`, { method: 'DELETE', headers, signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      if (hard?.ok) deleted += 1;
    }
  } catch {
    // best effort
  }
  return deleted;
}
