/**
 * The linter (issue 31): rules that find bugs, not taste; formatting is Prettier's (.prettierrc.json). TypeScript's
 * own checks (strict, noUnusedLocals) run in `npm run typecheck`; these add what the compiler does not see: promises
 * nobody awaits or handles, promises where a value is expected, unreachable or duplicated branches, and the like.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const bugs = {
  'no-async-promise-executor': 'error',
  'no-compare-neg-zero': 'error',
  'no-cond-assign': 'error',
  'no-constant-binary-expression': 'error',
  'no-constant-condition': ['error', { checkLoops: false }],
  'no-dupe-else-if': 'error',
  'no-dupe-keys': 'error',
  'no-duplicate-case': 'error',
  'no-fallthrough': 'error',
  'no-loss-of-precision': 'error',
  'no-self-assign': 'error',
  'no-self-compare': 'error',
  'no-sparse-arrays': 'error',
  'no-unreachable': 'error',
  'no-unsafe-finally': 'error',
  'no-unsafe-negation': 'error',
  'no-unsafe-optional-chaining': 'error',
  'no-unused-private-class-members': 'error',
  'use-isnan': 'error',
  'valid-typeof': 'error',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.cache/',
      '.data/',
      'coverage/',
      'examples/editor/node_modules/',
      'examples/editor/public/',
    ],
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...js.configs.recommended.languageOptions?.globals },
    },
    rules: { ...bugs, 'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }] },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      ...bugs,
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-expressions': 'error',
      '@typescript-eslint/only-throw-error': 'error',
    },
  },
  {
    // In a test, a destructuring that throws on an answer without data fails the test as an assertion would.
    files: ['test/**/*.ts'],
    rules: { 'no-unsafe-optional-chaining': 'off' },
  },
);
