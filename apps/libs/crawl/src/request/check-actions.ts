/**
 * Browser actions and list pagination, checked where they are configured (the API answers 400 and
 * stores nothing), so that a list the worker would refuse, or an action it could never run, is
 * said at once rather than through failed pages (browser-actions.ts runs them).
 *
 * - At most MAX_ACTIONS actions in a list (`ACTIONS_TOO_MANY`).
 * - Each action has what its type needs (`INVALID_ACTION`): a selector for `wait_for` and `click`,
 *   text for `type`, a key for `press`, `ms` for `wait`; `ms` within 0..MAX_ACTION_MS, `times`
 *   within 1..MAX_SCROLL_TIMES; `text` only on `type` (a credential that would go nowhere).
 * - Selectors (actions', `load_more_selector`) pass the same check as the website's
 *   (selector-check.ts): not a selector is `INVALID_ACTION`, a costly one `UNSUPPORTED_SELECTOR`.
 *   Chromium runs them, not css-select, but what grows with the page there grows in Chromium too,
 *   and one rule for every selector a user writes is easier to know.
 * - `pagination_type: load_more` needs a `load_more_selector` (`INVALID_ACTION`).
 *
 * Messages name the field, never a typed text: it may be a credential.
 */
import { MAX_ACTION_MS, MAX_ACTIONS, MAX_SCROLL_TIMES } from '../fetch/browser-work.ts';
import { selectorProblem } from '../parse/selector-check.ts';

export type ActionsCode = 'ACTIONS_TOO_MANY' | 'INVALID_ACTION' | 'UNSUPPORTED_SELECTOR';

export interface ActionsProblem {
  readonly code: ActionsCode;
  /** Dotted path of the field at fault (`actions.2.selector`, `login.actions.0.key`). */
  readonly field: string;
  readonly message: string;
}

/** An action as given to the API (text a string or a `{secret}` reference) or as in a spec. */
export interface ActionInput {
  readonly type: string;
  readonly selector?: string | null;
  readonly text?: unknown;
  readonly key?: string | null;
  readonly ms?: number | null;
  readonly times?: number | null;
  readonly full_page?: boolean | null;
}

const NEEDS: Readonly<Record<string, 'selector' | 'text' | 'key' | 'ms' | null>> = {
  wait_for: 'selector',
  click: 'selector',
  type: 'text',
  press: 'key',
  wait: 'ms',
  scroll: null,
  screenshot: null,
};

/** A key name as puppeteer takes them (`Enter`, `ArrowDown`, `F5`, `Numpad0`) or one character. */
const KEY = /^(?:[A-Za-z][A-Za-z0-9]{0,31}|.)$/u;

function selectorAt(field: string, selector: string): ActionsProblem | null {
  const problem = selectorProblem(selector);
  if (!problem) return null;
  return { code: problem.kind === 'invalid' ? 'INVALID_ACTION' : 'UNSUPPORTED_SELECTOR', field, message: `${field} ${JSON.stringify(selector)} ${problem.message}` };
}

/** The first problem of an action list (under `prefix`), or null. */
export function actionsProblem(actions: readonly ActionInput[] | null | undefined, prefix = 'actions'): ActionsProblem | null {
  if (!actions) return null;
  if (actions.length > MAX_ACTIONS) return { code: 'ACTIONS_TOO_MANY', field: prefix, message: `${prefix} lists ${actions.length} actions; at most ${MAX_ACTIONS} run on a page` };
  for (const [i, action] of actions.entries()) {
    const at = `${prefix}.${i}`;
    const invalid = (field: string, message: string): ActionsProblem => ({ code: 'INVALID_ACTION', field: `${at}${field ? `.${field}` : ''}`, message: `${at} (${action.type}) ${message}` });
    if (!(action.type in NEEDS)) return invalid('type', `is not an action: one of ${Object.keys(NEEDS).join(', ')}`);
    const need = NEEDS[action.type];
    if (need && (action[need] === undefined || action[need] === null || action[need] === '')) return invalid(need, `needs \`${need}\``);
    if (action.text !== undefined && action.text !== null && action.type !== 'type') return invalid('text', 'takes no `text` (only `type` does)');
    if (action.ms !== undefined && action.ms !== null && (!Number.isInteger(action.ms) || action.ms < 0 || action.ms > MAX_ACTION_MS)) return invalid('ms', `\`ms\` must be a whole number of ms from 0 to ${MAX_ACTION_MS}`);
    if (action.times !== undefined && action.times !== null && (!Number.isInteger(action.times) || action.times < 1 || action.times > MAX_SCROLL_TIMES)) return invalid('times', `\`times\` must be from 1 to ${MAX_SCROLL_TIMES}`);
    if (action.type === 'press' && !KEY.test(action.key!)) return invalid('key', `\`key\` is no key name (such as Enter, Tab, ArrowDown) nor one character`);
    if (action.selector !== undefined && action.selector !== null) {
      const problem = selectorAt(`${at}.selector`, action.selector);
      if (problem) return problem;
    }
  }
  return null;
}

/** The list pagination's problem (`load_more` without its button, a button selector refused), or null. */
export function paginationProblem(options: { readonly pagination_type?: string | null; readonly load_more_selector?: string | null }): ActionsProblem | null {
  if (options.load_more_selector) {
    const problem = selectorAt('load_more_selector', options.load_more_selector);
    if (problem) return problem;
  }
  if (options.pagination_type === 'load_more' && !options.load_more_selector) return { code: 'INVALID_ACTION', field: 'load_more_selector', message: '`pagination_type: load_more` needs `load_more_selector`, the button that loads more' };
  return null;
}
