// What is not configured costs nothing (issue 44): a gateway whose config uses no optional feature loads none of
// their modules, nor the packages only they need; a config that uses one loads it. The CLI runs as users run it
// (src/cli.ts, through the test loader), with test/module-recorder.mjs noting every module it loads; it is stopped
// once it serves, and the list is read.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { unusedPort } from '../ports.js';
import { RUN_TS } from '../run-ts.js';
import { tempDir } from '../temp.js';
import { scaled } from '../timing.js';
import { ROOT } from './harness.js';

const dir = tempDir('mcp-gw-lazy-modules-');
const SERVER = { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')] };

/** Each optional feature: the modules of ours and the packages only it loads (matched in the module's URL). */
const FEATURES: Record<string, RegExp[]> = {
  credentials: [
    /\/src\/credentials\//,
    /\/src\/gateway\/(credentials-loaded|upstream-credentials|per-caller-secrets|credential-notes)\./,
    /\/src\/layers\/credentialed-upstream\./,
    /\/node_modules\/jose\//,
  ],
  'per-caller children': [/\/src\/layers\/per-caller\//],
  // The OpenTelemetry SDK and exporters; @opentelemetry/api is not among them: prom-client's process metrics
  // (collectDefaultMetrics, served on /metrics whatever the config) require it.
  telemetry: [/\/src\/telemetry\/(otel-tracer|collector-reach)\./, /\/node_modules\/@opentelemetry\/(?!api\/)/],
  // policy/guardrails' rules are compiled by the config's checks, which are synchronous; what runs them is not.
  guardrails: [/\/src\/guardrails\//, /\/node_modules\/re2-wasm\//],
  // The refusal counts /metrics shows, and the folder's face that hands them out (with loaders for the rest).
  sandbox: [/\/bridge\/sandbox\/(?!refusals\.|index\.)/],
  openapi: [/\/bridge\/openapi\//, /\/node_modules\/@readme\//, /\/node_modules\/ajv(-formats)?\//],
  'remote servers': [/\/bridge\/(http\/http-upstream|sse)\b/, /\/node_modules\/undici\//],
  pools: [/\/bridge\/pool\//],
  // Search mode's index: loaded at the first search (src/search/tool-search.ts), whatever the config says.
  'search index': [/\/src\/search\/tool-index\./, /\/node_modules\/minisearch\//],
  // Policies themselves are not optional (allow-list.ts is the guard's); their CEL `when:` conditions are.
  'policy conditions': [/\/node_modules\/@marcbachmann\/cel-js\//],
  redis: [/\/node_modules\/(io)?redis\//],
};

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startOtlpReceiver();
});
after(() => receiver?.close());

/** Starts the CLI on `config`, waits until it serves, stops it, and returns the URLs of every module it loaded. */
async function modulesLoaded(name: string, config: Record<string, unknown>): Promise<string[]> {
  const file = path.join(dir, `${name}.json`);
  const out = path.join(dir, `${name}.modules`);
  writeFileSync(file, JSON.stringify(config));
  writeFileSync(out, '');
  const recorder = new URL('../module-recorder.mjs', import.meta.url).href;
  const child = spawn(process.execPath, [...RUN_TS, '--import', recorder, 'src/cli.ts', '--config', file], {
    cwd: ROOT,
    env: { ...process.env, MODULES_OUT: out },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let hung: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    hung = setTimeout(() => reject(new Error(`no "serving" line in ${scaled(60_000)} ms:\n${stderr}`)), scaled(60_000));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('"msg":"serving one"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before serving:\n${stderr}`)));
  }).finally(() => clearTimeout(hung));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  return readFileSync(out, 'utf8').split('\n').filter(Boolean);
}

/** For each feature, the modules of it that were loaded. */
function loadedOf(modules: string[]): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(FEATURES).map(([feature, patterns]) => [
      feature,
      [...new Set(modules.filter((url) => patterns.some((pattern) => pattern.test(url))))].map((url) =>
        url.replace(/^file:\/\/.*?\/(src|bridge|policy|node_modules)\//, '$1/'),
      ),
    ]),
  );
}

test(
  'a minimal config (one stdio server) loads no optional feature, ' + 'nor a package only one of them needs',
  async () => {
    const modules = await modulesLoaded('minimal', { listen: { port: 0 }, servers: { one: SERVER } });
    // The recorder saw the gateway's own modules, or an empty list below would prove nothing.
    assert.ok(
      modules.some((url) => url.endsWith('/src/gateway/build.ts')),
      modules.join('\n'),
    );
    const none = Object.fromEntries(Object.keys(FEATURES).map((feature) => [feature, []]));
    assert.deepEqual(loadedOf(modules), none);
  },
);

test(
  'a config that uses credentials, per-caller children, ' + 'telemetry, a pool and a condition loads each of them',
  async () => {
    const port = await unusedPort();
    const modules = await modulesLoaded('features', {
      listen: { port, publicUrl: `http://127.0.0.1:${port}` },
      auth: { apiKeys: [{ key: 'alice-key-0123456789abcdef', principal: 'alice' }] },
      credentials: { key: 'a-test-credentials-key-of-32-bytes-or-more', store: 'file', file: path.join(dir, 'c.json') },
      telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json' } },
      policies: [
        {
          name: 'alice',
          principals: { ids: ['alice'] },
          allow: { servers: ['one'] },
          when: [{ tool: 'one__*', expr: "tool != ''" }],
        },
      ],
      servers: {
        one: { ...SERVER, instances: 2, era: 'modern' },
        mine: { ...SERVER, perCaller: true, secrets: { TOKEN: { prompt: 'Your token' } } },
      },
    });
    const loaded = loadedOf(modules);
    for (const feature of ['credentials', 'per-caller children', 'telemetry', 'pools', 'policy conditions'])
      assert.ok(loaded[feature]!.length > 0, `${feature}: none of its modules loaded`);
    assert.ok(
      loaded.credentials!.some((url) => url.startsWith('src/credentials/store.')),
      loaded.credentials!.join(),
    );
    assert.ok(
      loaded.telemetry!.some((url) => url.includes('@opentelemetry/sdk-trace')),
      loaded.telemetry!.join(),
    );
    // Each was loaded for what the config uses; the others still are not.
    for (const feature of ['guardrails', 'sandbox', 'openapi', 'remote servers', 'redis', 'search index'])
      assert.deepEqual(loaded[feature], [], feature);
  },
);
