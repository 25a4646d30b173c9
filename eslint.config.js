// Lint rules, and the dependency direction of DESIGN.md enforced as import restrictions:
// api/cli -> services -> engine/core (+ chain/store interfaces); adapters import only core.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** Forbids relative imports that reach into the named top-level folders of src/. */
const forbidLayers = (layers, message, extra = []) => ({
  'no-restricted-imports': ['error', {
    patterns: [{ regex: `^(\\.\\./)+(${layers.join('|')})(/|\\.js$)`, message }, ...extra],
  }],
});
const noNodeApis = { regex: '^(node:|fs$|path$|http$|https$|net$|child_process$|crypto$|os$)', message: 'core/ and engine/ do no I/O and use no Node API.' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Fixture JSON is loosely typed; tests and benchmarks may say so.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/core/**'],
    rules: forbidLayers(['engine', 'chain', 'store', 'auth', 'services', 'api', 'cli', 'config', 'main'], 'core/ is pure: it imports no other layer.', [noNodeApis]),
  },
  {
    files: ['src/engine/**'],
    rules: forbidLayers(['chain', 'store', 'auth', 'services', 'api', 'cli', 'config', 'main'], 'engine/ depends only on core/.', [noNodeApis]),
  },
  {
    files: ['src/chain/**', 'src/store/**'],
    rules: forbidLayers(['engine', 'auth', 'services', 'api', 'cli', 'main'], 'Adapters import only core/.'),
  },
  {
    files: ['src/auth/**'],
    rules: forbidLayers(['engine', 'chain', 'services', 'api', 'cli', 'main'], 'auth/ sits below services/.'),
  },
  {
    files: ['src/services/**'],
    rules: forbidLayers(['api', 'cli', 'main'], 'services/ never import api/ or cli/.'),
  },
  {
    files: ['src/api/**', 'src/cli/**'],
    rules: forbidLayers(['engine', 'chain/bitcoind', 'store/sqlite', 'store/postgres'], 'api/ and cli/ go through services/; only main.ts wires adapters.'),
  },
  {
    files: ['src/web/**'],
    rules: forbidLayers(['engine', 'chain', 'store', 'cli', 'main'], 'web/ goes through services/, like api/.'),
  },
  {
    // The web interface's browser code.
    files: ['src/web/client/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
