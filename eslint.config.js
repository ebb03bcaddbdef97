// @ts-check
// Lint: the type-checked strict rules of typescript-eslint. A rule is turned off or relaxed only
// where it fights a deliberate habit of this code base; each says why in one line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/oracles/: frozen copies of old code the tests compare against, kept as they were (see its README).
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test/oracles/'] },
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
      // Numbers, booleans and regexps print as intended; nullish is allowed because noUncheckedIndexedAccess types every checked `xs[0]` and regexp group `T | undefined`.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowRegExp: true, allowNullish: true, allowAny: false, allowNever: false, allowArray: false },
      ],
      // Answers from nodes, files and flags are checked as they may arrive, not only as they are typed.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Actions and stores implement async interfaces; a body with nothing to await stays async so a throw is a rejection.
      '@typescript-eslint/require-await': 'off',
      // `[...s]` splits a string by code point on purpose: terminal widths and escapes work per code point.
      '@typescript-eslint/no-misused-spread': ['error', { allow: [{ from: 'lib', name: 'string' }] }],
      // Contexts and clocks carry plain functions declared with method syntax (`now(): number`); none of them uses `this`.
      '@typescript-eslint/unbound-method': 'off',
      // String(unknown) is how a value of unknown shape (a YAML scalar, a JSON field) is quoted in an error message.
      '@typescript-eslint/no-base-to-string': 'off',
      // Environments are maps: deleting a variable by name is the intent.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Node types `isTTY` as boolean, but it is undefined off a terminal: Boolean(x) there is not redundant.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // A `let` declared before the closures that read it and assigned once later says when it becomes set.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A leading underscore names a binding kept on purpose (rest-destructuring to drop a field, a counted loop).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // `(s) => out.write(s)` style callbacks return whatever the call returns; nobody reads it.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
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
      '@typescript-eslint/no-explicit-any': 'off',
      // The same for sums and messages built from that JSON.
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowRegExp: true, allowNullish: true, allowAny: true }],
      // Tests narrow a caught error or a socket to the class they then check (toBeInstanceOf, TLS-only fields).
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // Tests assert on the ANSI escapes the CLI writes (or must not write).
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    rules: {
      // The benchmarks, scripts and bin are type-checked by tsc (tsconfig.js.json), which reports unknown names with types in mind.
      'no-undef': 'off',
    },
  },
  {
    // CommonJS (bin/package.json): the entry point loads no ES module loader (bin/tsnode.js says why).
    // The benchmarks' CPU hook, preloaded with --require for the same reason (bench/proc-cpu.mjs).
    files: ['bin/*.js', 'bench/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
