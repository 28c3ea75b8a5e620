/** apps/services/webhooks' settings, from the environment (README: Configuration). */
export interface WebhookConfig {
  /** One delivery attempt's time for the whole exchange (connect, send, answer). */
  readonly timeoutMs: number;
  /** Items of one job are gathered this long (from the first) into one `items.extracted` delivery. */
  readonly itemsWindowMs: number;
  /** … or until this many items, */
  readonly itemsMax: number;
  /** … or this many bytes of item JSON. */
  readonly itemsMaxBytes: number;
  /** How often re-deliveries and test deliveries asked through the API are looked for. */
  readonly pollMs: number;
  /** How long a delivery may be held by its owner's spent delivery budget before it is given up (default 24 h). */
  readonly holdMaxMs?: number;
}

/** A day: a burst a day's budget cannot absorb is given up rather than carried in the retry tiers for ever. */
export const DEFAULT_HOLD_MAX_MS = 86_400_000;

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfig = { timeoutMs: 10_000, itemsWindowMs: 2_000, itemsMax: 500, itemsMaxBytes: 1_000_000, pollMs: 1_000, holdMaxMs: DEFAULT_HOLD_MAX_MS };

export function webhookConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const int = (name: string, dflt: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
    return n;
  };
  return {
    timeoutMs: int('TRAWL_WEBHOOK_TIMEOUT_MS', DEFAULT_WEBHOOK_CONFIG.timeoutMs),
    itemsWindowMs: int('TRAWL_WEBHOOK_ITEMS_WINDOW_MS', DEFAULT_WEBHOOK_CONFIG.itemsWindowMs),
    itemsMax: int('TRAWL_WEBHOOK_ITEMS_MAX', DEFAULT_WEBHOOK_CONFIG.itemsMax),
    itemsMaxBytes: DEFAULT_WEBHOOK_CONFIG.itemsMaxBytes,
    pollMs: int('TRAWL_WEBHOOK_POLL_MS', DEFAULT_WEBHOOK_CONFIG.pollMs),
    holdMaxMs: int('TRAWL_WEBHOOK_HOLD_MAX_MS', DEFAULT_HOLD_MAX_MS),
  };
}
