/** Where two JSON values differ, as dotted paths (`paths./jobs.get.responses.200`), at most `limit` of them. */
export function jsonDifferences(expected: unknown, actual: unknown, limit = 20, path = ''): string[] {
  if (Object.is(expected, actual)) return [];
  const bothObjects = typeof expected === 'object' && expected !== null && typeof actual === 'object' && actual !== null;
  if (!bothObjects || Array.isArray(expected) !== Array.isArray(actual)) return [path || '(root)'];
  const out: string[] = [];
  const a = expected as Record<string, unknown>;
  const b = actual as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const at = path ? `${path}.${key}` : key;
    if (!(key in a)) out.push(`${at} (new)`);
    else if (!(key in b)) out.push(`${at} (gone)`);
    else out.push(...jsonDifferences(a[key], b[key], limit - out.length, at));
    if (out.length >= limit) return out.slice(0, limit);
  }
  return out;
}
