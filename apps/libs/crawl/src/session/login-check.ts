/**
 * Whether a login worked, read from the page it ended on: the spec's rules, all that are given
 * must hold — `failure_text` absent from the page, the final URL matching `success_url_pattern`
 * (RE2), an element matching `success_selector`. With none given, an answer that is not an error
 * and does not show the login form again counts as logged in.
 *
 * The reason says which rule failed, never a field's value: it ends in the job's LOGIN_FAILED.
 */
import { load } from 'cheerio/slim';
import { RE2JS } from 're2js';
import type { LoginSpec } from '@trawl/schemas';

export interface LoginAnswer {
  readonly status: number;
  readonly finalUrl: string;
  readonly body: string | null;
}

/** null: logged in; else why not. */
export function loginProblem(answer: LoginAnswer, rules: Pick<LoginSpec, 'success_selector' | 'success_url_pattern' | 'failure_text'>): string | null {
  if (answer.status >= 400) return `the login answered HTTP ${answer.status}`;
  const body = answer.body ?? '';
  if (rules.failure_text && body.includes(rules.failure_text)) return 'the page after the login shows the failure text';
  if (rules.success_url_pattern) {
    let matches: boolean;
    try {
      matches = RE2JS.compile(rules.success_url_pattern).matcher(answer.finalUrl).find();
    } catch {
      return 'the success URL pattern is not a valid RE2 pattern';
    }
    if (!matches) return 'the page after the login is not at a URL matching the success pattern';
  }
  if (rules.success_selector) {
    let found: boolean;
    try {
      found = load(body)(rules.success_selector).length > 0;
    } catch {
      return 'the success selector is not a valid CSS selector';
    }
    if (!found) return 'the page after the login has no element matching the success selector';
  }
  if (!rules.failure_text && !rules.success_url_pattern && !rules.success_selector && load(body)('form input[type=password]').length > 0) {
    return 'the page after the login shows a password form again';
  }
  return null;
}
