/**
 * Takes credentials out of text that may quote an endpoint — a dependency's error message, a
 * readiness detail: the user-info of any URL (`scheme://user:password@host` → `scheme://[redacted]@host`)
 * and the values of query parameters that commonly carry secrets. Endpoints may hold credentials
 * (`DATABASE_URL`, `CLICKHOUSE_URL`, …), and none may reach a log, an error answer or a health
 * response.
 */
const USER_INFO = /([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/gi;
const SECRET_PARAMS = /([?&;](?:password|passwd|pwd|secret|token|access_token|api_key|apikey|key|user|username|sslpassword)=)[^&#;\s]*/gi;

export function redactCredentials(text: string): string {
  return text.replace(USER_INFO, '$1[redacted]@').replace(SECRET_PARAMS, '$1[redacted]');
}
