/**
 * The headers of a message on the log, in the shape Kafka clients hand them over (kafkajs's
 * `IHeaders`): a value is bytes or text, and a name sent twice arrives as a list. Declared here, not
 * imported from a client, so that what reads trace context and retry headers loads no Kafka client.
 */
export interface MessageHeaders {
  [name: string]: Buffer | string | (Buffer | string)[] | undefined;
}

/** A header's value as text; the last one when it was sent more than once. */
export function headerString(headers: MessageHeaders | undefined, name: string): string | undefined {
  const raw = headers?.[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toString('utf8');
}
