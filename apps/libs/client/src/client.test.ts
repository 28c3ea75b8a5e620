import { describe, expect, it } from 'vitest';
import { createTrawlClient, expectOk, TrawlApiError } from './index.ts';

/** A fetch that keeps the requests it is given and answers each with `answer`. */
function recording(answer: () => Response) {
  const requests: Request[] = [];
  return { requests, fetch: async (request: Request) => (requests.push(request), answer()) };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('createTrawlClient', () => {
  it('sends the key as a Bearer header, the path and query as typed, to the base URL', async () => {
    const f = recording(() => json(200, { jobs: [], next_cursor: null }));
    const client = createTrawlClient({ baseUrl: 'http://api.test:3000/', apiKey: 'trawl_k', fetch: f.fetch });
    const data = await expectOk(client.GET('/jobs', { params: { query: { status: 'running,failed', limit: 5 } } }));
    expect(data).toEqual({ jobs: [], next_cursor: null });
    expect(f.requests[0]!.url).toBe('http://api.test:3000/jobs?status=running%2Cfailed&limit=5');
    expect(f.requests[0]!.headers.get('authorization')).toBe('Bearer trawl_k');
  });

  it('asks a key function at every request, and keeps an authorization the request sets', async () => {
    const f = recording(() => json(200, { user_id: 'a' }));
    let key: string | null = 'trawl_one';
    const client = createTrawlClient({ baseUrl: 'http://api.test', apiKey: () => key, fetch: f.fetch });
    await client.GET('/me');
    key = null;
    await client.GET('/me');
    await client.GET('/me', { headers: { authorization: 'Bearer trawl_mine' } });
    expect(f.requests.map((r) => r.headers.get('authorization'))).toEqual(['Bearer trawl_one', null, 'Bearer trawl_mine']);
  });
});

describe('expectOk', () => {
  it("throws the API's error code, message and field", async () => {
    const f = recording(() => json(404, { error: { code: 'JOB_NOT_FOUND', message: 'job x not found', field: 'id' } }));
    const client = createTrawlClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch: f.fetch });
    const err = await expectOk(client.GET('/jobs/{id}/status', { params: { path: { id: 'x' } } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrawlApiError);
    expect(err).toMatchObject({ status: 404, code: 'JOB_NOT_FOUND', message: 'job x not found', field: 'id' });
  });

  it('names an answer that is not the API\'s error shape by its status', async () => {
    const f = recording(() => new Response('upstream down', { status: 502, statusText: 'Bad Gateway' }));
    const client = createTrawlClient({ baseUrl: 'http://api.test', fetch: f.fetch });
    await expect(expectOk(client.GET('/quotas'))).rejects.toMatchObject({ status: 502, code: 'HTTP_502', message: 'upstream down' });
  });
});
