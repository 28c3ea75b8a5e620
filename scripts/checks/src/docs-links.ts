/**
 * Docs that cannot rot: every Markdown file's relative links (to files and to headings, across
 * files) and every repository path it names in inline code must lead somewhere.
 *
 * Links are checked by remark-validate-links through unified-engine, the way remark's own CLI runs
 * it: only the engine sees every file at once, which is what checking a heading in another file
 * takes. Nothing leaves the machine (`repository: false`: no hosted-Git URL is resolved).
 *
 * Paths in inline code (`apps/services/api/src/errors.ts`, `src/model/plan-batch.ts`) are how
 * these docs point at code, and they rot the same way links do. A code span is taken as a path when
 * it is one token that starts with a top-level folder of the repository (`apps/`, `docs/`, …), or,
 * in a package's own Markdown, with one of a package's folders (`src/`, `test/`, …) and goes below
 * it, and has no placeholder in it (`<Event>.v<n>.hex`, `*.test.ts`, `{a,b}`); it must exist
 * relative to the Markdown file or to the repository's root. Runtime paths (`.trawl/logs/`) and
 * conventions named in the root docs ("each service has a `src/main.ts`") are left alone.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve as resolvePath } from 'node:path';
import { remark } from 'remark';
import remarkValidateLinks from 'remark-validate-links';
import { engine, type Options as EngineOptions } from 'unified-engine';
import type { VFile } from 'vfile';
import { visit } from 'unist-util-visit';
import type { Root } from 'mdast';
import type { Plugin } from 'unified';

export interface DocFinding {
  /** Relative to the root given. */
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** Folders of the repository a named path may start with, wherever the Markdown file is. */
const REPO_STARTS = ['apps/', 'scripts/', 'schemas/', 'base/', 'streams/', 'docs/', '.ci/'];
/** A package's own folders: held to account only in a package's Markdown, and not as a bare folder. */
const PACKAGE_STARTS = ['src/', 'test/', 'bench/', 'fixtures/'];
const PLACEHOLDER = /[<>*{}$:\s|]|\.\.\./;

/** Whether a code span's text reads as a repository path this check should hold to account. */
export function isNamedPath(text: string, inPackage: boolean): boolean {
  if (PLACEHOLDER.test(text) || !/[\w/]$/.test(text)) return false;
  if (REPO_STARTS.some((p) => text.startsWith(p))) return true;
  return inPackage && PACKAGE_STARTS.some((p) => text.startsWith(p)) && text.replace(/\/$/, '').includes('/');
}

/** A unified plugin: a message for each named path that exists neither beside the file nor at `root`. */
function namedPathsExist(root: string): Plugin<[], Root> {
  return () => (tree, file) => {
    const here = dirname(resolvePath(file.cwd, file.path));
    const inPackage = here !== root && existsSync(join(here, 'package.json'));
    visit(tree, 'inlineCode', (node) => {
      const text = node.value.replace(/#.*$/, '');
      if (!isNamedPath(text, inPackage)) return;
      if (existsSync(join(here, text)) || existsSync(join(root, text))) return;
      file.message(`names \`${text}\`, which exists neither beside this file nor at the repository's root`, node.position);
    });
  };
}

/** Every finding in `files` (absolute paths or relative to `root`). */
export async function checkDocs(root: string, files: readonly string[]): Promise<DocFinding[]> {
  const context = await new Promise<{ files: VFile[] }>((resolve, reject) => {
    engine(
      {
        processor: remark(),
        cwd: root,
        files: files.map((f) => resolvePath(root, f)),
        extensions: ['md'],
        // The engine types its plugins over unist's Node, remark's plugins are typed over mdast's Root.
        plugins: [[remarkValidateLinks, { repository: false, root }], namedPathsExist(root)] as unknown as EngineOptions['plugins'],
        silent: true,
        quiet: true,
        reporter: () => '',
        detectConfig: false,
        detectIgnore: false,
      },
      (error, _code, ctx) => (error ? reject(error) : resolve(ctx as unknown as { files: VFile[] })),
    );
  });
  return context.files.flatMap((f) =>
    f.messages.map((m) => ({ file: relative(root, resolvePath(f.cwd, f.path)), line: m.line ?? 0, message: m.reason })),
  );
}
