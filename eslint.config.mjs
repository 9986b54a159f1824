// Lint gate: type-aware rules that catch floating promises and keep imports honest, the
// layer map of docs/architecture.md, and status keys taken from src/core/status-keys.ts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders below monitor/: monitor may use all of them, agent and bin these and the rest. */
const BELOW_MONITOR =
  'core util sql http log aws config db prom plan collectors sinks heartbeat engine exporter status web'.split(
    ' ',
  );

/**
 * The layers: each folder of src/ and the folders it may import from. Everything else in
 * src/ (and test/) is refused. Nothing may import bin/. This is the map that opens
 * docs/architecture.md, one line per folder; test/lint/layers.test.ts fails when a folder of
 * src/ is missing here or there.
 */
export const LAYERS = {
  core: [],
  util: ['core'],
  sql: ['core'],
  http: ['core', 'util'],
  log: ['core', 'util'],
  aws: ['core', 'util'],
  config: ['core', 'util'],
  db: ['core', 'util', 'aws', 'config'],
  prom: ['core', 'util'],
  plan: ['core', 'util'],
  collectors: ['core', 'util', 'aws', 'db', 'heartbeat', 'sql'],
  sinks: ['core', 'util', 'prom', 'sql'],
  heartbeat: ['core', 'util', 'db'],
  engine: ['core', 'util', 'plan'],
  exporter: ['core', 'util', 'http', 'prom', 'config', 'plan', 'engine', 'sql'],
  status: ['core', 'util'],
  web: ['core', 'util', 'http', 'engine', 'sql'],
  server: ['core', 'util', 'http', 'sql'],
  monitor: BELOW_MONITOR,
  plugins: ['core', 'util', 'collectors', 'sinks'],
  agent: [...BELOW_MONITOR, 'server', 'monitor', 'plugins'],
  bin: [...BELOW_MONITOR, 'server', 'monitor', 'agent', 'plugins'],
};

/** Test code and its fixtures may reach across layers (integration tests wire real pieces). */
const TEST_FILES = ['**/*.test.ts', '**/*fixture*.ts', '**/test-helpers.ts'];

/**
 * mysql2's plain connections: every connection of the process comes from a mysql2 pool.
 * One plain `Connection` among pool connections is enough to make V8 read mysql2's packet
 * handling megamorphically for good (docs/performance.md, "What a collection costs").
 */
const PLAIN_CONNECTION = ['mysql2', 'mysql2/promise'].map((name) => ({
  name,
  importNames: ['createConnection'],
  message:
    'take connections from a mysql2 pool (createPool): one plain Connection slows every packet of the process (docs/performance.md)',
}));

/**
 * Node's crypto, imported by value: loading it initialises OpenSSL (about 2.4 MiB and tens
 * of milliseconds of every start), so sonde takes it at the call that needs it
 * (`process.getBuiltinModule('node:crypto')`), and a start without TLS, logins by SHA-256 or
 * authentication never loads it (docs/performance.md, "Node's crypto left unloaded").
 */
const NODE_CRYPTO = {
  name: 'node:crypto',
  allowTypeImports: true,
  message:
    "load it at the call that needs it: process.getBuiltinModule('node:crypto') (importing it costs every start OpenSSL's set-up, docs/performance.md)",
};

/** One config object per folder: `no-restricted-imports` refusing every folder it may not use. */
function layerRules() {
  const folders = [...Object.keys(LAYERS), 'test'];
  return Object.entries(LAYERS).map(([folder, allowed]) => {
    const refused = folders.filter((f) => f !== folder && !allowed.includes(f));
    const message = `src/${folder}/ may import only ${allowed.length > 0 ? allowed.join(', ') : 'other core files'} (layer map in docs/architecture.md).`;
    // A dynamic import() is refused too (esquery regexes cannot hold a slash: \x2F).
    const dynamic = {
      selector: `ImportExpression[source.value=/^(\\.\\.\\x2F)+(${refused.join('|')})(\\x2F|$)/]`,
      message,
    };
    return {
      files: [`src/${folder}/**/*.ts`],
      ignores: TEST_FILES,
      rules: {
        'no-restricted-syntax': ['error', NO_EXPORT_ALL, ...STATUS_LITERAL_SELECTORS, dynamic],
        'no-restricted-imports': [
          'error',
          {
            paths: [...PLAIN_CONNECTION, NODE_CRYPTO],
            patterns: [
              {
                regex: `^(\\.\\./)+(${refused.join('|')})(/|$)`,
                message,
              },
            ],
          },
        ],
      },
    };
  });
}

/**
 * A status key must come from src/core/status-keys.ts: refuse a string or template literal
 * as the first argument of `set`/`delete`/`setComputed` on anything named like a status
 * writer (`status`, `serverStatus`, `this.#status`, `opts.status`…).
 */
const STATUS_LITERAL_SELECTORS = ['callee.object.name', 'callee.object.property.name'].map((path) => ({
  selector: `CallExpression[callee.property.name=/^(set|delete|setComputed)$/][${path}=/status/i][arguments.0.type=/^(Literal|TemplateLiteral)$/]`,
  message:
    'status keys come from src/core/status-keys.ts (ServerKey, MonitorKey, monitorKeyOf), not a literal',
}));
const NO_EXPORT_ALL = { selector: 'ExportAllDeclaration', message: 'no export *' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'before', 'after', 'beforeEach', 'afterEach', 'test', 'suite'],
            },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      'no-restricted-syntax': ['error', NO_EXPORT_ALL, ...STATUS_LITERAL_SELECTORS],
    },
  },
  ...layerRules(),
  {
    files: ['src/core/status-keys.ts', ...TEST_FILES],
    rules: { 'no-restricted-syntax': ['error', NO_EXPORT_ALL] },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // The single executable's main script (scripts/build-binary.mjs): CommonJS.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', URL: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The web page's script (web/): a browser module, served as written.
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        'window document location history sessionStorage fetch URLSearchParams requestAnimationFrame setTimeout clearTimeout ResizeObserver HTMLElement Intl'
          .split(' ')
          .map((g) => [g, 'readonly']),
      ),
    },
  },
);
