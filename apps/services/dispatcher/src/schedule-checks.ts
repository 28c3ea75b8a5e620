/**
 * What a due schedule may do, pure: run (with its target and website), be cancelled, or be paused
 * with a reason its owner can read in the schedule's API view and operators in the log.
 *
 * Ownership is checked when the schedule fires, not only when it was made: ids of websites and
 * targets are global and chosen by users, so the website a schedule names may have been deleted
 * since, or deleted and re-created by another user — whose spec must never run under this
 * schedule's owner. A website or target of nobody (owner null) is shared by the platform and
 * usable by all.
 */
import type { Schedule, Target, Website } from '@trawl/store';

export type ScheduleResolution =
  | { readonly kind: 'run'; readonly target: Target | null; readonly website: Website | null }
  | { readonly kind: 'cancel'; readonly reason: 'TARGET_GONE'; readonly message: string }
  | { readonly kind: 'pause'; readonly reason: PauseReason; readonly message: string };

export type PauseReason = 'WEBSITE_GONE' | 'WEBSITE_NOT_OWNED' | 'TARGET_NOT_OWNED' | 'INTERVAL_TOO_SHORT';

function usableBy(owner: string | null, resourceOwner: string | null): boolean {
  return resourceOwner === null || resourceOwner === owner;
}

function websiteCheck(schedule: Schedule, websiteId: string, website: Website | undefined): ScheduleResolution | undefined {
  if (!website) return { kind: 'pause', reason: 'WEBSITE_GONE', message: `website "${websiteId}" no longer exists` };
  if (!usableBy(schedule.owner_id, website.owner_id)) {
    return { kind: 'pause', reason: 'WEBSITE_NOT_OWNED', message: `website "${websiteId}" now belongs to another user` };
  }
  return undefined;
}

export function resolveSchedule(schedule: Schedule, targets: ReadonlyMap<string, Target>, websites: ReadonlyMap<string, Website>): ScheduleResolution {
  if (schedule.target_id) {
    const target = targets.get(schedule.target_id);
    if (!target || !target.active) return { kind: 'cancel', reason: 'TARGET_GONE', message: `target "${schedule.target_id}" is gone or inactive` };
    if (!usableBy(schedule.owner_id, target.owner_id)) {
      return { kind: 'pause', reason: 'TARGET_NOT_OWNED', message: `target "${target.id}" now belongs to another user` };
    }
    const website = websites.get(target.website_id);
    return websiteCheck(schedule, target.website_id, website) ?? { kind: 'run', target, website: website! };
  }
  const spider = schedule.request?.spider;
  if (!spider) return { kind: 'run', target: null, website: null };
  const website = websites.get(spider);
  return websiteCheck(schedule, spider, website) ?? { kind: 'run', target: null, website: website! };
}
