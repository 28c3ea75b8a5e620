/**
 * Credentials may be part of any endpoint (`postgres://trawl:…@host/db`, `http://writer:…@host:8123`)
 * and must never reach a log line, an error answer or a health response. These helpers are what
 * every place that prints an endpoint, or an error that may quote one, calls.
 */
import type { Endpoints } from './endpoints.ts';

const MASK = '***';

/**
 * The URL with its password replaced by `***`; the user name stays (it says which account, not how
 * to use it). What is not a URL (a Kafka bootstrap list) loses any `user:password@` it carries.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = MASK;
    return u.toString();
  } catch {
    return redactText(url);
  }
}

/** Every endpoint with its password masked: what a service may log at start or show in a health answer. */
export function redactEndpoints(ep: Endpoints): Endpoints {
  return {
    ...ep,
    kafkaBrokers: ep.kafkaBrokers.map((b) => redactText(b)),
    schemaRegistryUrl: redactUrl(ep.schemaRegistryUrl),
    databaseUrl: redactUrl(ep.databaseUrl),
    clickhouseUrl: redactUrl(ep.clickhouseUrl),
    clickhouseReadUrl: redactUrl(ep.clickhouseReadUrl),
    s3Url: redactUrl(ep.s3Url),
  };
}

/**
 * `text` (an error message, a driver's answer) with the password of every `scheme://user:password@`
 * in it masked, and each of `secrets` (the passwords of the endpoints in use, say) wherever it
 * appears on its own: a client that prints its connection settings does not always print a URL.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]*@/gi, `$1${MASK}@`).replace(SECRET_PARAMS, `$1${MASK}`);
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(MASK);
  return out;
}

/** Query parameters that carry a secret in a URL (ClickHouse's `?password=`, a token in a link). */
const SECRET_PARAMS = /([?&;](?:password|passwd|pwd|secret|token|access_token|api_key|apikey|key|sslpassword)=)[^&#;\s]*/gi;

/** The passwords carried by the endpoints (percent-decoded, as a client would send them), for {@link redactText}. */
export function endpointSecrets(ep: Endpoints): string[] {
  const out = new Set<string>();
  for (const url of [ep.schemaRegistryUrl, ep.databaseUrl, ep.clickhouseUrl, ep.clickhouseReadUrl, ep.s3Url]) {
    try {
      const p = new URL(url).password;
      if (p) {
        out.add(p);
        out.add(decodeURIComponent(p));
      }
    } catch {
      // not a URL: nothing to find
    }
  }
  return [...out];
}
