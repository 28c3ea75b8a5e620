/**
 * `npm run docs:links -w @trawl/checks`, run by `npm run lint`: every tracked Markdown file's
 * relative links, heading anchors and named repository paths (src/docs-links.ts); exits 1 on any
 * finding.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { checkDocs } from './docs-links.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  // The check's own fixtures are broken on purpose.
  .filter((f) => f !== '' && !f.includes('node_modules/') && !f.startsWith('scripts/checks/test/fixtures/'));
const findings = await checkDocs(ROOT, files);
for (const f of findings) console.error(`${f.file}:${f.line}: ${f.message}`);
if (findings.length > 0) {
  console.error(`check-docs: ${findings.length} broken link(s) or path(s) in ${files.length} Markdown files`);
  process.exit(1);
}
console.log(`check-docs: ${files.length} Markdown files, every relative link, heading anchor and named path leads somewhere`);
