import { describe, expect, it } from 'vitest';
import { redactCredentials } from './redact-credentials.ts';

describe('redactCredentials', () => {
  it.each([
    ['connect ECONNREFUSED postgres://trawl:s3cret@db.internal:5432/trawl', 'connect ECONNREFUSED postgres://[redacted]@db.internal:5432/trawl'],
    ['http://reader:p%40ss@127.0.0.1:8123/ping answered 401', 'http://[redacted]@127.0.0.1:8123/ping answered 401'],
    ['https://user@registry.example/subjects answered 500', 'https://[redacted]@registry.example/subjects answered 500'],
    ['http://127.0.0.1:8123/?user=writer&password=hunter2&query=1', 'http://127.0.0.1:8123/?user=[redacted]&password=[redacted]&query=1'],
    ['two: postgres://a:b@h1/x and http://c:d@h2/', 'two: postgres://[redacted]@h1/x and http://[redacted]@h2/'],
    ['no answer within 2000 ms', 'no answer within 2000 ms'],
    ['mail me at someone@example.com', 'mail me at someone@example.com'],
  ])('%s', (input, expected) => {
    expect(redactCredentials(input)).toBe(expected);
  });
});
