import { samples } from '@trawl/schemas';
import { describe, expect, it } from 'vitest';
import { feedMessage } from './feed-event.ts';

describe('feedMessage', () => {
  it("shows a JobDispatched spec's credentials as [sealed], never their sealed values", () => {
    const sealed = 'tsec1.0123abcd.aaaa.bbbb.cccc';
    const spec = { ...samples.JobDispatched.spec, headers: { authorization: sealed }, cookies: { 'example.com': [sealed] }, proxies: [{ url: 'http://proxy.example:3128', username: sealed, password: sealed }] };
    const event = { name: 'JobDispatched' as const, value: { ...samples.JobDispatched, spec }, topic: 'trawl.jobs', partition: 0, offset: '1' };
    const message = feedMessage(event, spec.website_id ?? 'job');
    expect(message).not.toContain(sealed);
    const data = JSON.parse(message).data;
    expect(data.spec.headers).toEqual({ authorization: '[sealed]' });
    expect(data.spec.proxies[0]).toMatchObject({ url: 'http://proxy.example:3128', username: '[sealed]', password: '[sealed]' });
  });
});
