import { describe, expect, it } from 'vitest';
import { MAX_ACTIONS } from '../fetch/browser-work.ts';
import { actionsProblem, paginationProblem } from './check-actions.ts';

describe('actionsProblem', () => {
  it('passes a list of runnable actions', () => {
    expect(
      actionsProblem([
        { type: 'wait_for', selector: '#q' },
        { type: 'click', selector: 'button.accept', ms: 5_000 },
        { type: 'type', selector: '#q', text: { secret: 'query' } },
        { type: 'press', key: 'Enter' },
        { type: 'press', key: '/' },
        { type: 'scroll', times: 3 },
        { type: 'scroll', selector: '#footer' },
        { type: 'wait', ms: 0 },
        { type: 'screenshot', full_page: true },
      ]),
    ).toBeNull();
    expect(actionsProblem(undefined)).toBeNull();
  });

  it('refuses a list over its bound', () => {
    const many = Array.from({ length: MAX_ACTIONS + 1 }, () => ({ type: 'wait', ms: 1 }));
    expect(actionsProblem(many)).toMatchObject({ code: 'ACTIONS_TOO_MANY', field: 'actions' });
    expect(actionsProblem(many.slice(1))).toBeNull();
  });

  it('refuses an action without what its type needs, or with what it cannot take', () => {
    expect(actionsProblem([{ type: 'click' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.selector' });
    expect(actionsProblem([{ type: 'wait_for', selector: '' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.selector' });
    expect(actionsProblem([{ type: 'wait', ms: 1 }, { type: 'type', selector: '#q' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.1.text' });
    expect(actionsProblem([{ type: 'press' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.key' });
    expect(actionsProblem([{ type: 'press', key: 'Enter; rm' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.key' });
    expect(actionsProblem([{ type: 'wait' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.ms' });
    expect(actionsProblem([{ type: 'wait', ms: 60_001 }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.ms' });
    expect(actionsProblem([{ type: 'scroll', times: 0 }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.times' });
    expect(actionsProblem([{ type: 'click', selector: 'a', text: 'secret words' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.text' });
    expect(actionsProblem([{ type: 'hover', selector: 'a' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.type' });
  });

  it('checks selectors as the website check does, under the caller prefix', () => {
    expect(actionsProblem([{ type: 'click', selector: 'li:has(~ li)' }], 'login.actions')).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'login.actions.0.selector' });
    expect(actionsProblem([{ type: 'wait_for', selector: 'div[' }])).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.selector' });
  });

  it('never quotes a typed text', () => {
    const problem = actionsProblem([{ type: 'type', text: 'hunter2', selector: 'b ~ i' }]);
    expect(problem?.code).toBe('UNSUPPORTED_SELECTOR');
    expect(problem?.message).not.toContain('hunter2');
  });
});

describe('paginationProblem', () => {
  it('wants the button of a load-more list, and a selector that may run', () => {
    expect(paginationProblem({ pagination_type: 'load_more', load_more_selector: '#more' })).toBeNull();
    expect(paginationProblem({ pagination_type: 'infinite_scroll' })).toBeNull();
    expect(paginationProblem({ pagination_type: 'load_more', load_more_selector: null })).toMatchObject({ code: 'INVALID_ACTION', field: 'load_more_selector' });
    expect(paginationProblem({ pagination_type: 'load_more', load_more_selector: 'a ~ b' })).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'load_more_selector' });
  });
});
