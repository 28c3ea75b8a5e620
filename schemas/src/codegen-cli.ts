import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTypes } from './codegen.ts';

const out = join(dirname(fileURLToPath(import.meta.url)), 'generated', 'events.ts');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, generateTypes());
process.stderr.write(`wrote ${out}\n`);
