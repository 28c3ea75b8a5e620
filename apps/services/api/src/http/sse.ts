/**
 * Server-Sent Events framing (WHATWG HTML §9.2). Data is one JSON document per event, so it never
 * contains a newline and needs no `data:` continuation lines.
 */
export function sseEvent(event: string, data: unknown, id?: number | string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/** The sequence a reconnecting client last saw: `Last-Event-ID`, else `?last_event_id=`, else 0. */
export function lastEventId(header: string | string[] | undefined, query: number | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw !== undefined && /^\d{1,15}$/.test(raw.trim())) return Number(raw.trim());
  return query ?? 0;
}
