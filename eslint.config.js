// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Realm scripts (ADR 0050): TypeScript that runs inside QuickJS, where no Node, browser or timer API exists.
const NOT_IN_QUICKJS = [
  ...['process', 'require', 'module', 'exports', '__dirname', '__filename', 'Buffer', 'global', 'console'],
  ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'queueMicrotask'],
  ...[
    'structuredClone',
    'TextEncoder',
    'TextDecoder',
    'atob',
    'btoa',
    'fetch',
    'URL',
    'performance',
    'crypto',
  ],
  ...['WebAssembly', 'MessageChannel', 'navigator', 'window', 'self'],
].map((name) => ({ name, message: `${name} does not exist inside QuickJS (realm scripts, ADR 0050)` }));
const ONLY_REALM_IMPORTS = {
  regex: '^(?!\\./)',
  message: 'realm scripts run inside QuickJS: import only other realm files',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs', '**/*.d.mts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-exports': ['error', { restrictDefaultExports: { direct: true, named: true } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tool configs and reporters must default-export.
    files: ['**/vitest.config.ts', '**/tsup.config.ts', 'vitest.workspace.ts', 'scripts/summary-reporter.ts'],
    rules: { 'no-restricted-exports': 'off' },
  },
  {
    // Tests may use loose patterns that production code may not.
    files: ['**/test/**/*.ts', '**/bench/**/*.ts', '**/testdata/**/*.ts', 'tools/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Realm scripts (ADR 0050): they use none of the APIs above and import only each other. Three rules are off:
    // capturing built-ins before any script runs is the point (ADR 0042, `unbound-method`: each captured method
    // is static or called through Reflect.apply); `String(x)` of a script's value is the context API's documented
    // conversion (`no-base-to-string`); `arguments.length` tells a missing argument from `undefined`
    // (`prefer-rest-params`).
    files: ['packages/workflow-engine/src/sandbox/realm/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      'prefer-rest-params': 'off',
      'no-restricted-globals': ['error', ...NOT_IN_QUICKJS],
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [ONLY_REALM_IMPORTS] }],
    },
  },
  {
    // The helper factory is a separate script the prelude compiles on first use: the prelude imports its types only.
    files: ['packages/workflow-engine/src/sandbox/realm/prelude.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [ONLY_REALM_IMPORTS],
          paths: ['./util-factory.js', './util.js', './extras.js'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'the helper factory is a separate script, compiled on first use: import its types only',
          })),
        },
      ],
    },
  },
  {
    // security-requirements S117: untrusted hex/Base64/JSON/UTF-8 is decoded only by the strict
    // decoders (envelope-crypto `encoding.ts`, oapp-format `strict-json.ts`).
    // The workflow engine parses no format bytes: its JSON is the sandbox channel's (every field re-checked) and its
    // text decoding is the lossy UTF-8 of `getBody()` on HTTP bodies, which interfaces.md §5.2 asks for.
    files: ['packages/*/src/**/*.ts'],
    ignores: [
      'packages/envelope-crypto/src/encoding.ts',
      'packages/oapp-format/src/strict-json.ts',
      'packages/workflow-engine/src/**',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='JSON'][callee.property.name='parse']",
          message: 'parse untrusted JSON with the strict parser (S117), not JSON.parse',
        },
        {
          selector:
            "CallExpression[callee.object.name='Buffer'][callee.property.name='from'][arguments.1.value=/^(hex|base64|base64url)$/]",
          message: 'decode hex/Base64 with the strict decoders in envelope-crypto (S117)',
        },
        {
          selector:
            "NewExpression[callee.name='TextDecoder']:not(:has(Property[key.name='fatal'][value.value=true]))",
          message: 'decode format bytes with a fatal TextDecoder (S117)',
        },
      ],
    },
  },
);
