/**
 * Where the content store lives: TRAWL_S3_URL (the S3 endpoint, with the access key and secret as
 * the URL's user and password, as the other endpoints carry theirs), TRAWL_S3_BUCKET and
 * TRAWL_S3_REGION. Each comes from the environment, else the local stack's stack.env, else the
 * local default (endpoints() in @trawl/base). AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are used
 * when the URL carries no credentials, so a real S3 works with its usual variables.
 */
import { endpoints, redactUrl } from '@trawl/base';

export interface ContentStoreConfig {
  /** The endpoint without credentials. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
}

export function contentStoreConfig(env: NodeJS.ProcessEnv = process.env): ContentStoreConfig {
  const ep = endpoints(env);
  let url: URL;
  try {
    url = new URL(ep.s3Url);
  } catch {
    throw new Error(`TRAWL_S3_URL must be a URL such as http://KEY:SECRET@127.0.0.1:9100, got "${redactUrl(ep.s3Url)}"`);
  }
  const accessKeyId = url.username ? decodeURIComponent(url.username) : env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = url.password ? decodeURIComponent(url.password) : env.AWS_SECRET_ACCESS_KEY;
  url.username = '';
  url.password = '';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(ep.s3Bucket)) throw new Error(`TRAWL_S3_BUCKET must be a valid S3 bucket name, got "${ep.s3Bucket}"`);
  return {
    endpoint: url.toString().replace(/\/+$/, ''),
    bucket: ep.s3Bucket,
    region: env.TRAWL_S3_REGION || 'us-east-1',
    accessKeyId,
    secretAccessKey,
  };
}
