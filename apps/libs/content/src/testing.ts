/**
 * A content store on its own fresh bucket, for integration tests against the real S3 endpoint of
 * the environment (the local stack's S3Proxy by default).
 */
import { randomBytes } from 'node:crypto';
import { contentStoreConfig } from './content-config.ts';
import { ContentStore } from './content-store.ts';

export async function testContentStore(env: NodeJS.ProcessEnv = process.env): Promise<ContentStore> {
  const store = new ContentStore({ ...contentStoreConfig(env), bucket: `trawl-test-${randomBytes(6).toString('hex')}` });
  await store.ensureBucket();
  return store;
}
