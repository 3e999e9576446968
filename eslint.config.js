// Lint rules of `make lint` (docs/architecture.md#layers holds the import rules, checked by
// dependency-cruiser). Formatting is prettier's job, so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/**', '.state/**', '.cluster/**', 'dist/**', 'deploy/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        module: 'writable',
        require: 'readonly',
        setInterval: 'readonly',
        console: 'readonly',
      },
    },
  },
  {
    // The dashboard runs in the browser (docs/architecture.md#dashboard).
    files: ['web/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Tests and benchmarks read JSON answers whose shape is what they assert.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
);
