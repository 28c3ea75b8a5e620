import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CliError } from '../lib/cli-error.ts';
import { CRAWL_FLAG_OPTIONS, optionsBody } from './crawl-options.ts';

const flags = (...args: string[]) => optionsBody(parseArgs({ args, options: CRAWL_FLAG_OPTIONS, strict: true }).values);

describe('trawl crawl: flags to the POST /crawl body', () => {
  it('maps every flag to its field, repeatable ones to lists', () => {
    expect(
      flags(
        '--header', 'X-Api-Key: k-123', '--header', 'Referer:https://shop.example/',
        '--user-agent', 'ShopMonitor/1.0', '--locale', 'fr-CH',
        '--cookie', 'Shop.example=consent=yes; Path=/', '--cookie', 'shop.example=sid=abc',
        '--proxy', 'http://proxy-a.example:3128', '--proxy', 'socks5://proxy-b.example:1080', '--sessions', '4',
        '--login-url', 'https://shop.example/login', '--login-field', 'user=alice', '--login-secret', 'password=shop-password', '--login-success', '.account',
        '--actions', '[{"type":"click","selector":"#accept"}]',
        '--include', '/products/', '--include', '/category/', '--exclude', '[?&]sort=',
        '--scope', 'same_domain', '--follow-nofollow',
      ),
    ).toEqual({
      headers: { 'X-Api-Key': 'k-123', Referer: 'https://shop.example/' },
      user_agent: 'ShopMonitor/1.0',
      locale: 'fr-CH',
      cookies: { 'shop.example': ['consent=yes; Path=/', 'sid=abc'] },
      proxies: ['http://proxy-a.example:3128', 'socks5://proxy-b.example:1080'],
      sessions: 4,
      login: { kind: 'form', url: 'https://shop.example/login', fields: { user: 'alice', password: { secret: 'shop-password' } }, success_selector: '.account' },
      actions: [{ type: 'click', selector: '#accept' }],
      include_patterns: ['/products/', '/category/'],
      exclude_patterns: ['[?&]sort='],
      scope: 'same_domain',
      follow_nofollow: true,
    });
  });

  it('sets nothing for no flag, and reads --actions from a file', () => {
    expect(flags()).toEqual({});
    const file = join(mkdtempSync(join(tmpdir(), 'trawl-actions-')), 'actions.json');
    writeFileSync(file, '[{"type": "scroll", "times": 3}]');
    expect(flags('--actions', file)).toEqual({ actions: [{ type: 'scroll', times: 3 }] });
  });

  it('refuses a malformed flag with exit code 2', () => {
    for (const args of [
      ['--header', 'no colon'],
      ['--cookie', 'shop.example'],
      ['--sessions', 'many'],
      ['--scope', 'planet'],
      ['--actions', '{"type": "click"}'],
      ['--actions', '/nonexistent/actions.json'],
      ['--login-secret', 'password=pw'],
    ]) {
      let error: unknown;
      try {
        flags(...args);
      } catch (err) {
        error = err;
      }
      expect(error, args.join(' ')).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode, args.join(' ')).toBe(2);
    }
  });
});
