/** `npm run seed -w @trawl/demo-site`: loads the demo website, target and schedule. */
import { CONFIG_MIGRATIONS, createPool, migrate } from '@trawl/store';
import { demoBaseUrl, seedDemo } from './seed-demo.ts';

const pool = createPool({ applicationName: 'trawl-seed' });
try {
  await migrate(pool, 'config', CONFIG_MIGRATIONS);
  const website = await seedDemo(pool);
  process.stdout.write(`seeded website ${website.id} at ${demoBaseUrl()}\n`);
} finally {
  await pool.end();
}
