import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDocs, isNamedPath } from '../src/docs-links.ts';

const ROOT = join(import.meta.dirname, 'fixtures', 'docs');

describe('the docs check', () => {
  it('passes a file whose links, anchors and named paths all lead somewhere', async () => {
    expect(await checkDocs(ROOT, ['good.md', 'target.md'])).toEqual([]);
  });

  it('fails a broken relative link, a heading missing in another file and a named path that is gone', async () => {
    const findings = await checkDocs(ROOT, ['broken.md', 'target.md']);
    expect(findings.map((f) => `${f.file}:${f.line}`)).toEqual(['broken.md:3', 'broken.md:3', 'broken.md:3']);
    const text = findings.map((f) => f.message).join('\n');
    expect(text).toContain('gone.md');
    expect(text).toContain('no-such-heading');
    expect(text).toContain('apps/gone/src/index.ts');
  });

  it("holds a package's Markdown to its own folders", async () => {
    const findings = await checkDocs(ROOT, ['pkg/README.md']);
    expect(findings).toEqual([expect.objectContaining({ file: 'pkg/README.md', message: expect.stringContaining('src/gone.ts') })]);
  });

  it('reads a code span as a path only when it is one and has no placeholder', () => {
    expect(isNamedPath('apps/services/api/src/errors.ts', false)).toBe(true);
    expect(isNamedPath('src/model/plan-batch.ts', true)).toBe(true);
    expect(isNamedPath('src/model/plan-batch.ts', false)).toBe(false);
    expect(isNamedPath('test/', true)).toBe(false);
    expect(isNamedPath('schemas/fixtures/<Event>.v<n>.hex', false)).toBe(false);
    expect(isNamedPath('apps/*/src', false)).toBe(false);
    expect(isNamedPath('.trawl/logs/test.log', false)).toBe(false);
  });
});
