// @ts-check
// Lint: the type-checked strict rules of typescript-eslint. A rule is turned off or relaxed only
// where it fights a deliberate habit of this code base; each says why in one line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // noUncheckedIndexedAccess types every indexed read `T | undefined`; `xs[i]!` after a bounds check is the idiom.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Numbers, booleans and regexps in messages print as intended; undefined and null stay refused.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowRegExp: true, allowNullish: false, allowAny: false, allowNever: false, allowArray: false }],
      // `(s) => out.write(s)` style callbacks return whatever the call returns; nobody reads it.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Escaping what a node sends before it reaches a terminal means matching control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**'],
    rules: {
      // Tests parse the CLI's JSON output (`any`) and check its shape with expect(): the assertion is the type check.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    rules: {
      // The benchmarks, scripts and bin are type-checked by tsc (tsconfig.js.json), which reports unknown names with types in mind.
      'no-undef': 'off',
    },
  },
);
