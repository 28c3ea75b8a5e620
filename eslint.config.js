import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.trawl/**', 'infra/**', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
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
