import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.webrl/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Workflow code is replayed: no clocks, randomness or I/O outside Temporal's APIs.
    files: ['workflows/**/*.ts', 'test/fixtures/workflows/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch'],
      'no-restricted-imports': ['error', { patterns: ['node:*', 'fs', 'path', 'crypto', '@aws-sdk/*', 'playwright-core'] }],
    },
  },
);
