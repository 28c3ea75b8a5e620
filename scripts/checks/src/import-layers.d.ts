// Types of import-layers.js (plain JavaScript, so that eslint.config.js loads it without a compiler).
import type { Rule } from 'eslint';

export type Layer = 'schemas' | 'base' | 'streams' | 'client' | 'libs' | 'services' | 'harness' | 'tools';

export interface WorkspacePackage {
  readonly name: string;
  /** Relative to the repository root, `/`-separated. */
  readonly dir: string;
  readonly layer: Layer | undefined;
}

export declare const REPO_ROOT: string;
export declare const ALLOWED: Readonly<Record<Layer, readonly Layer[]>>;
export declare function layerOf(dir: string): Layer | undefined;
export declare function workspacePackages(root?: string): Map<string, WorkspacePackage>;

declare const rule: Rule.RuleModule;
export default rule;
