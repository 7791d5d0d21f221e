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
    // Type-aware rules: the TypeScript sources, typed by the project's tsconfig.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its rejection; `void` marks the few started on purpose.
      // node:test's describe/test return promises the runner itself tracks.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'suite', 'test', 'it'] }] },
      ],
    },
  },
  {
    // An evaluation harness is a registered part (env/evaluators/harnesses/registry.ts): outside its own folder, code asks it, never its name.
    files: ['**/*.ts'],
    ignores: ['env/evaluators/harnesses/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['left', 'right'].flatMap((side) => {
          const other = side === 'left' ? 'right' : 'left';
          return [`${side}.name`, `${side}.property.name`].map((name) => ({
            selector: `BinaryExpression[operator=/^[!=]=/][${name}='harness'][${other}.type='Literal']`,
            message: 'ask the harness (evaluationHarness(name) in env/evaluators/harnesses/registry.ts) instead of comparing its name',
          }));
        }),
        {
          selector: "SwitchStatement:matches([discriminant.name='harness'], [discriminant.property.name='harness'])",
          message: 'ask the harness (evaluationHarness(name) in env/evaluators/harnesses/registry.ts) instead of switching on its name',
        },
      ],
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
