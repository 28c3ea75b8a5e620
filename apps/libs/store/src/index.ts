export { createPool, inTransaction, type Pool, type PoolClient } from './pool.ts';
export { migrate, type Migration } from './migrate.ts';
export {
  InvalidCadenceError,
  dueSlot,
  firstDue,
  isTimeZone,
  shortestGapMs,
  validateCron,
  type Cadence,
} from './schedules/cadence.ts';
export { jobIdForSlot } from './schedules/slot-job-id.ts';
export { NOT_PROJECTED, runningJobs } from './schedules/running-jobs.ts';
export type { CrawlRequest, OverlapPolicy, Schedule, Target, Website, WebsiteReach } from './config/types.ts';
export { CONFIG_MIGRATIONS } from './config/migrations.ts';
export { deleteWebsite, getWebsite, getWebsites, listWebsites, upsertWebsite } from './config/websites.ts';
export { deleteTarget, getTarget, getTargets, listTargets, searchUrl, upsertTarget } from './config/targets.ts';
export {
  cadenceOf,
  claimDueSchedules,
  countLiveSchedules,
  createSchedule,
  getSchedule,
  listSchedules,
  markDispatchedMany,
  markSkippedMany,
  pauseSchedules,
  setScheduleStatus,
  updateSchedule,
  type DispatchedSlot,
  type PausedSchedule,
  type SkippedSlot,
} from './config/schedules.ts';
export { crawlSpec, resolvedSpec, sealedLayers, websiteLayer, type OptionsLayer, type SpecSealing } from './config/crawl-spec.ts';
export { type Credential, type StoredAction, type StoredLogin, type StoredOptions, type StoredProxy } from './config/reach.ts';
export { DEFAULT_QUOTAS, quotaLimitsOf, quotasFromEnv, setUserQuotas, type QuotaLimits } from './quotas/quota-limits.ts';
export { decideInterval, decideJob } from './quotas/quota-decision.ts';
export { lockUserQuotas, purgeSettledLedger, readUsage, recordJobs, type LedgerEntry } from './quotas/quota-ledger.ts';
export { admitJob, checkCadenceQuota, createScheduleWithinQuota } from './quotas/quota-guard.ts';
export { confirmJob, releaseJob, reserveJob, RESERVATION_SECONDS } from './quotas/quota-reservation.ts';
export { jobOwner, readStorageUsage, SETTLE_AFTER_MS } from './quotas/storage-usage.ts';
export { QuotaExceededError } from './quotas/errors.ts';
export { WEBHOOK_MIGRATIONS, WEBHOOK_MIGRATION_OWNER } from './webhooks/migrations.ts';
export { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_TYPE, type WebhookEventType } from './webhooks/event-types.ts';
// Webhook limits (subscriptions, test/re-delivery calls, the delivery budget), counted by the hour.
export { roomAt, usedAt, WINDOW_MS as HOURLY_WINDOW_MS, type Bucket } from './quotas/hourly-window.ts';
export { DEFAULT_WEBHOOK_QUOTAS, setUserWebhookQuotas, webhookQuotaLimitsOf, webhookQuotasFromEnv, type WebhookQuotaLimits, type WebhookQuotaName } from './quotas/webhook-quota-limits.ts';
export { decideWebhook, decideWebhookRequest } from './quotas/webhook-quota-decision.ts';
export { admitWebhook, admitWebhookRequest, purgeWebhookUsage, readWebhookUsage, type WebhookUsage } from './quotas/webhook-quota-guard.ts';
export { giveBackDeliveries, reserveDeliveries, type DeliveryGiveBack, type DeliveryReservation } from './quotas/webhook-delivery-usage.ts';
export { CRAWL_SPECS_OWNER, CRAWL_SPEC_MIGRATIONS, loadCrawlSpec, saveCrawlSpecs } from './specs/crawl-specs.ts';
export { dedupeKey, type DedupeInput } from './dedupe/dedupe-key.ts';
export { claimDedupe, dedupeTtlFromEnv, hasCrawlDedupe } from './dedupe/crawl-dedupe.ts';
export { csvCell, csvLine } from './export/csv.ts';
