#!/usr/bin/env node
// The `trawl` launcher: registers tsx so the TypeScript sources run as they are (no build step),
// then hands over to src/main.ts. Works from anywhere in the repo via `npx trawl …`.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
