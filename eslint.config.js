import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importLayers from './scripts/checks/src/import-layers.js';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.trawl/**', 'infra/**', '**/*.cjs', 'scripts/checks/test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The layers of the house (scripts/checks/src/import-layers.js): schemas ← base ← streams ← libs ←
    // services, harnesses and tools on top; no service imports a service.
    plugins: { trawl: { rules: { 'import-layers': importLayers } } },
    rules: { 'trawl/import-layers': 'error' },
  },
  {
    // A package's public API is the list of names its index exports: `export *` hides it and leaks
    // whatever a module happens to export.
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'export names explicitly (export { a, type B } from ...), not export *: the index is the package\'s public API' },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          // kafkajs's fast paths must be in place before kafkajs loads: streams/src/kafka/kafkajs.ts
          // installs them and hands out kafkajs's values; types may come straight from kafkajs.
          paths: [{ name: 'kafkajs', allowTypeImports: true, message: "take kafkajs's values from streams/src/kafka/kafkajs.ts (it installs the fast paths first)" }],
          patterns: [{ group: ['../../*/src/*', '../../../*/src/*'], message: 'import other packages through their package.json exports' }],
        },
      ],
    },
  },
);
