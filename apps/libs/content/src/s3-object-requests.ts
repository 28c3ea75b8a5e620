/**
 * The content store's per-page requests (HEAD, PUT, GET of one object) sent over a keep-alive
 * agent and signed with AWS Signature Version 4 by aws4, instead of through the AWS SDK's S3 client.
 *
 * Why: they run for every page a job keeps formats of (the worker writes the body and each format,
 * `POST /scrape` reads them back), and the SDK's request pipeline (middleware stack, endpoint
 * rules, serialisers, its signer) took ~1–1.3 ms of CPU per request against ~0.3 ms here: a
 * quarter of the fetching worker's CPU per scrape and a fifth of the API's (the content README,
 * "Cost"; profiles in the apps/harness/e2e README, "Bench"). A request here is one signature
 * and one HTTP exchange. What the SDK gave that matters here is kept: its credentials (the SDK's
 * provider chain resolves and refreshes them, a session token included), path-style addressing
 * (S3Proxy, MinIO), retries of what is safe to retry, and 404 told apart from an unavailable
 * store. The rare calls (bucket, list, delete) stay on the SDK. The signature is aws4's (a
 * synchronous Signature Version 4 signer that caches each day's key).
 *
 * The payload is not hashed for the signature (`x-amz-content-sha256: UNSIGNED-PAYLOAD`, which
 * AWS S3, MinIO and S3Proxy accept): the object's key is the SHA-256 of its uncompressed bytes
 * already, a reader can check what it gets against it, and hashing the gzip again per PUT is CPU for
 * nothing. Every request is idempotent (an object is whole under its hash or absent), so a network
 * error, a 5xx or a 429 is retried (ATTEMPTS in all, with a short backoff): a keep-alive socket the
 * server closed meanwhile fails its next request with ECONNRESET, which the retry absorbs. A socket
 * silent for IDLE_TIMEOUT_MS (30 s) fails its attempt: a store that hangs is then unavailable, not a page
 * held until its budget runs out.
 */
import http from 'node:http';
import https from 'node:https';
import aws4 from 'aws4';
import type { ContentStoreConfig } from './content-config.ts';
import { ContentStoreUnavailableError } from './errors.ts';

export interface ObjectResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface ObjectRequest {
  readonly method: 'GET' | 'HEAD' | 'PUT';
  readonly key: string;
  readonly body?: Uint8Array;
  /** Extra headers (lower-case names), signed with the rest. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal | undefined;
}

const ATTEMPTS = 3;
/** How long a request's socket may stay silent before the attempt fails (a default: options.idleTimeoutMs). */
const IDLE_TIMEOUT_MS = 30_000;
const BACKOFF_MS = 50;
const UNSIGNED = 'UNSIGNED-PAYLOAD';

export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** Signs and sends single-object requests to one bucket. */
export class S3ObjectRequests {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly client: typeof http | typeof https;
  private readonly idleTimeoutMs: number;

  constructor(
    private readonly config: Pick<ContentStoreConfig, 'endpoint' | 'bucket' | 'region'>,
    /** Asked before each request (the SDK's provider caches and refreshes them). */
    private readonly credentials: () => Promise<SigningCredentials>,
    options: { maxSockets?: number; idleTimeoutMs?: number } = {},
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
    this.base = new URL(config.endpoint);
    this.client = this.base.protocol === 'https:' ? https : http;
    // Kept-alive sockets: a TCP (and TLS) handshake per object would cost more than the request.
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
    this.agent = this.base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /**
   * The store's answer (a 404 or a 403 is an answer); ContentStoreUnavailableError when every
   * attempt failed; an aborted request throws its signal's reason.
   */
  async send(req: ObjectRequest): Promise<ObjectResponse> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (req.signal?.aborted) throw req.signal.reason;
      try {
        const res = await this.once(req);
        if (res.status < 500 && res.status !== 429) return res;
        lastError = new Error(`HTTP ${res.status}`);
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason;
        lastError = err;
      }
      if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, BACKOFF_MS * attempt));
    }
    throw new ContentStoreUnavailableError(`${req.method} ${req.key} failed ${ATTEMPTS} times`, { cause: lastError });
  }

  close(): void {
    this.agent.destroy();
  }

  private async once(req: ObjectRequest): Promise<ObjectResponse> {
    const path = `${this.base.pathname.replace(/\/+$/, '')}/${this.config.bucket}/${req.key.split('/').map(encodeSegment).join('/')}`;
    const headers = this.sign(await this.credentials(), req.method, path, req.headers ?? {}, req.body?.byteLength);
    return new Promise((resolve, reject) => {
      const r = this.client.request(
        { protocol: this.base.protocol, hostname: this.base.hostname, port: this.base.port, method: req.method, path, headers, agent: this.agent, ...(req.signal ? { signal: req.signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      r.on('error', reject);
      // A socket silent this long (a store that hangs) fails the attempt, which is retried; a
      // large body still moving is not cut, whatever it takes.
      r.setTimeout(this.idleTimeoutMs, () => r.destroy(new Error(`no byte from the store in ${this.idleTimeoutMs} ms`)));
      r.end(req.body);
    });
  }

  /** The request's headers with its SigV4 Authorization, signed by aws4 (which caches each day's signing key). */
  private sign(creds: SigningCredentials, method: string, path: string, extra: Readonly<Record<string, string>>, contentLength: number | undefined): Record<string, string> {
    const headers: Record<string, string> = { ...extra, 'x-amz-content-sha256': UNSIGNED };
    if (contentLength !== undefined) headers['content-length'] = String(contentLength);
    // No body given to the signer: the payload is not hashed (UNSIGNED-PAYLOAD, above).
    const signed = aws4.sign({ host: this.base.host, path, method, service: 's3', region: this.config.region, headers }, creds);
    return signed.headers as Record<string, string>;
  }
}

/** A path segment as SigV4 canonicalises it (RFC 3986 unreserved characters kept). */
function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
