/**
 * `trawl webhooks list|create|delete|deliveries|test`: the caller's webhook subscriptions and
 * their deliveries through the API's /webhooks routes; apps/services/webhooks does the sending.
 */
import { randomBytes } from 'node:crypto';
import type { Delivery, paths } from '@trawl/client';
import type { ApiClient } from '../lib/api-client.ts';
import { UsageError } from '../lib/cli-error.ts';
import { printable, table } from '../lib/format.ts';

type EventType = paths['/webhooks']['post']['requestBody']['content']['application/json']['events'][number];
type DeliveryStatus = Delivery['status'];

export interface WebhookCreateOptions {
  readonly events?: string;
  readonly secret?: string;
  readonly job?: string;
  readonly schedule?: string;
  readonly json: boolean;
}

const when = (iso: string | null) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '–');

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export async function listWebhooks(api: ApiClient, options: { json: boolean }): Promise<void> {
  const { webhooks } = await api.ok(api.http.GET('/webhooks'));
  if (options.json) return print(webhooks);
  if (webhooks.length === 0) return void process.stdout.write('no webhooks yet — try: npx trawl webhooks create <url> --events job.completed\n');
  const rows = [['webhook', 'active', 'events', 'only', 'url']];
  for (const w of webhooks) {
    const only = w.job_id ? `job ${w.job_id}` : w.schedule_id ? `schedule ${w.schedule_id}` : '';
    rows.push([printable(w.id), w.active ? 'yes' : 'no', printable(w.events.join(',')), printable(only), printable(w.url)]);
  }
  process.stdout.write(table(rows) + '\n');
}

export async function createWebhook(api: ApiClient, url: string, options: WebhookCreateOptions): Promise<void> {
  // The API refuses an event type it does not know (400 VALIDATION_FAILED naming it).
  const events = (options.events ?? '').split(',').map((e) => e.trim()).filter(Boolean) as EventType[];
  if (events.length === 0) throw new UsageError('trawl webhooks create needs --events, e.g. --events job.completed,job.failed');
  // The API never returns a secret: one made here is shown this once.
  const secret = options.secret ?? randomBytes(24).toString('base64url');
  const hook = await api.ok(api.http.POST('/webhooks', {
    body: {
      url,
      events,
      secret,
      ...(options.job === undefined ? {} : { job_id: options.job }),
      ...(options.schedule === undefined ? {} : { schedule_id: options.schedule }),
    },
  }));
  if (options.json) return print(options.secret === undefined ? { ...hook, secret } : hook);
  process.stdout.write(`${printable(hook.id)}\n`);
  if (options.secret === undefined) process.stderr.write(`signing secret (shown once, the API never returns it): ${secret}\n`);
}

export async function deleteWebhook(api: ApiClient, id: string, options: { json: boolean }): Promise<void> {
  await api.ok(api.http.DELETE('/webhooks/{id}', { params: { path: { id } } }));
  if (options.json) return print({ id, deleted: true });
  process.stdout.write(`${printable(id)}: deleted\n`);
}

export async function listDeliveries(api: ApiClient, id: string, options: { status?: string; limit: number; json: boolean }): Promise<void> {
  // As with events, the API refuses a status it does not know.
  const query = { limit: options.limit, ...(options.status ? { status: options.status as DeliveryStatus } : {}) };
  const { deliveries } = await api.ok(api.http.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query } }));
  if (options.json) return print(deliveries);
  if (deliveries.length === 0) return void process.stdout.write('no deliveries yet\n');
  const rows = [['delivery', 'type', 'status', 'attempts', 'http', 'created', 'next try', 'job', 'last error']];
  for (const d of deliveries) {
    rows.push([
      printable(d.id),
      printable(d.type),
      printable(d.status),
      String(d.attempts),
      d.last_status === null ? '' : String(d.last_status),
      when(d.created_at),
      when(d.next_attempt_at),
      printable(d.job_id ?? ''),
      printable(d.last_error ?? ''),
    ]);
  }
  process.stdout.write(table(rows) + '\n');
}

export async function testWebhook(api: ApiClient, id: string, options: { json: boolean }): Promise<void> {
  const d = await api.ok(api.http.POST('/webhooks/{id}/test', { params: { path: { id } } }));
  if (options.json) return print(d);
  process.stdout.write(`${printable(d.id)}: ${printable(d.type)} ${printable(d.status)} — see: npx trawl webhooks deliveries ${printable(id)}\n`);
}

/** `POST /webhooks/:id/deliveries/:delivery_id/redeliver`: apps/services/webhooks sends it once more, same body and id. */
export async function redeliver(api: ApiClient, id: string, deliveryId: string, options: { json: boolean }): Promise<void> {
  const d = await api.ok(api.http.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path: { id, delivery_id: deliveryId } } }));
  if (options.json) return print(d);
  process.stdout.write(`${printable(d.id)}: ${printable(d.type)} ${printable(d.status)} — sent once more, see: npx trawl webhooks deliveries ${printable(id)}\n`);
}
