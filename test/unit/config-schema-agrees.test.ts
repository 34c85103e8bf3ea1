// gateway.config.schema.json and the loader agree (issue 36): every config the docs and deploy/ show passes
// both, and generated configs (placeholders, host keys, near-miss keys, bad values) pass one iff the other.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { configSchema, parseConfig } from '../../src/config/config.js';
import { expandEnv } from '../../src/config/env.js';
import { adoptHostServers } from '../../src/config/mcp-servers.js';
import { configJsonSchema } from '../../src/config/schema.js';

const ROOT = new URL('../../', import.meta.url);
const read = (file: string): string => readFileSync(new URL(file, ROOT), 'utf8');
const jsonSchema = configJsonSchema() as { properties: Record<string, unknown> };
const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(jsonSchema);
const TOP_LEVEL_KEYS = Object.keys(jsonSchema.properties);

/** What a variable named *_PEM stands for: a private key (a client's, which the loader checks it can sign with). */
const SIGNING_KEY_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

/** A value for every variable a config reads, of the kind its name says, so a placeholder stands for a valid value. */
function envFor(config: unknown): Record<string, string> {
  const names = new Set(
    [...JSON.stringify(config).matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!),
  );
  const value = (name: string): string =>
    name.endsWith('_PEM')
      ? SIGNING_KEY_PEM
      : name.includes('REDIS')
        ? 'redis://redis.internal:6379'
        : name.endsWith('URL')
          ? 'http://10.0.0.1:8080'
          : name.endsWith('PORT')
            ? '8080'
            : name.endsWith('HOST')
              ? '127.0.0.1'
              : 'x'.repeat(40);
  return Object.fromEntries([...names].map((name) => [name, value(name)]));
}

function loads(config: unknown): string | true {
  try {
    parseConfig(config, 'generated.yaml', '/nonexistent', envFor(config));
    return true;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The loader's per-key verdict (host maps adopted, ${VAR} expanded, zod), without the checks across keys. */
function keysAccepted(config: unknown): boolean {
  const host = adoptHostServers(config);
  return host.problems.length === 0 && configSchema.safeParse(expandEnv(host.raw, [], envFor(config), [])).success;
}

const schemaSays = (config: unknown): string | true => validate(config) || JSON.stringify(validate.errors?.slice(0, 3));

const shippedConfigs = ['gateway.config.yaml', 'deploy/container.config.yaml', 'deploy/replicas.config.yaml'];
for (const file of shippedConfigs) {
  test(`${file} passes the schema and loads`, () => {
    const config = parseYaml(read(file));
    assert.equal(schemaSays(config), true);
    assert.equal(loads(config), true);
  });
}

/** The YAML blocks of a Markdown file that are gateway configs (only top-level config keys). */
function configBlocks(file: string): { at: string; config: Record<string, unknown> }[] {
  const blocks = [...read(file).matchAll(/```ya?ml\n([\s\S]*?)```/g)].map((m, i) => ({
    at: `${file} block ${i + 1}`,
    text: m[1]!,
  }));
  return blocks
    .filter((block) => !/\{ \.\.\. \}|\[ \.\.\. \]/.test(block.text)) // the outline with "…" stand-ins, not a config
    .map((block) => ({ at: block.at, config: parseYaml(block.text) }))
    .filter(
      ({ config }) =>
        config !== null &&
        typeof config === 'object' &&
        !Array.isArray(config) &&
        Object.keys(config).every((key) => TOP_LEVEL_KEYS.includes(key)),
    );
}

test('every config shown in the docs passes the schema and the loader; the whole ones also load', () => {
  const blocks = ['README.md', 'docs/configuration.md', 'docs/deployment.md', 'docs/security.md'].flatMap(configBlocks);
  assert.ok(blocks.length >= 20, `found only ${blocks.length} config blocks`);
  for (const { at, config } of blocks) {
    const whole = 'servers' in config || 'mcpServers' in config;
    // A fragment (one section) is shown with some server beside it.
    const completed = whole ? config : { ...config, servers: { a: { command: 'node' } } };
    assert.equal(schemaSays(completed), true, `${at}: the schema refuses it`);
    assert.equal(keysAccepted(completed), true, `${at}: the loader refuses its keys`);
    if (whole) assert.equal(loads(completed), true, `${at}: does not load`);
  }
});

test("docs/configuration.md's outline names every top-level key of the schema, and no other", () => {
  const outline = /```yaml\n((?:[a-zA-Z]+: [^\n]*\n)+)```/.exec(read('docs/configuration.md'))![1]!;
  const keys = [...outline.matchAll(/^([a-zA-Z]+):/gm)].map((m) => m[1]!);
  assert.deepEqual(keys.sort(), TOP_LEVEL_KEYS.filter((key) => key !== 'mcpServers').sort());
});

test("the issue's cases: ${VAR} in a Redis URL, a URL and a short key pass both; autoApprove passes neither", () => {
  const base = { servers: { a: { command: 'node' } } };
  const placeholders = {
    ...base,
    cache: { store: 'redis', url: '${MCP_GATEWAY_REDIS_URL}' },
    mrtr: { internalUrl: '${MCP_GATEWAY_INTERNAL_URL}' },
    auth: { apiKeys: [{ key: '${CI_BOT_KEY}', principal: 'ci' }] },
  };
  assert.equal(schemaSays(placeholders), true);
  assert.equal(keysAccepted(placeholders), true);
  const hostOnly = { mcpServers: { files: { command: 'npx', autoApprove: ['read_file'] } } };
  assert.notEqual(schemaSays(hostOnly), true);
  assert.match(String(loads(hostOnly)), /'autoApprove' is a host's setting/);
});

// Generated configs: values right, wrong and ${…}, in the places where the two used to disagree.
const placeholder = (name: string) => fc.constantFrom(`\${${name}}`, `\${${name}:-x}`);
const port = fc.oneof(
  fc.integer({ min: -5, max: 70_000 }),
  fc.constantFrom('8080', 'eighty', ''),
  placeholder('GW_PORT'),
);
const redisUrl = fc.oneof(
  fc.constantFrom('redis://r:6379', 'rediss://r:6380', 'http://r:6379', 'not a url'),
  placeholder('GW_REDIS_URL'),
);
const httpUrl = fc.oneof(
  fc.constantFrom('https://mcp.example.com/mcp', 'ftp://x', 'nope'),
  placeholder('GW_UPSTREAM_URL'),
);
const apiKey = fc.oneof(fc.constantFrom('short', 'k'.repeat(16), ''), placeholder('GW_API_KEY'));
const serverEntry = fc.record(
  {
    command: fc.constantFrom('node', 'npx'),
    comand: fc.constant('node'),
    url: httpUrl,
    type: fc.constantFrom('stdio', 'http', 'streamable-http', 'sse', 'carrier-pigeon'),
    disabled: fc.boolean(),
    autoApprove: fc.constant(['read_file']),
    timeoutMs: fc.oneof(fc.integer({ min: -1, max: 100_000 }), placeholder('GW_PORT')),
  },
  { requiredKeys: [] },
);
const serverMap = fc.dictionary(fc.constantFrom('a', 'b', 'files'), serverEntry, { minKeys: 1, maxKeys: 2 });
const generatedConfig = fc
  .record(
    {
      listen: fc.record({ port }, { requiredKeys: [] }),
      cache: fc.record({ store: fc.constantFrom('memory', 'redis', 'memcached'), url: redisUrl }, { requiredKeys: [] }),
      auth: fc.record({
        apiKeys: fc.array(fc.record({ key: apiKey, principal: fc.constantFrom('ci', '') }), {
          minLength: 1,
          maxLength: 2,
        }),
      }),
      servers: serverMap,
      mcpServers: serverMap,
    },
    { requiredKeys: [] },
  )
  // A server name in both maps is a problem across keys, which no JSON Schema can see.
  .filter(
    (config) =>
      !(config.servers && config.mcpServers && Object.keys(config.servers).some((name) => name in config.mcpServers!)),
  );

test('generated configs: the schema accepts one iff the loader accepts its keys', () => {
  fc.assert(
    fc.property(generatedConfig, (config) => {
      const schema = validate(config);
      const loader = keysAccepted(config);
      assert.equal(
        schema,
        loader,
        `schema ${schema}, loader ${loader}: ${JSON.stringify(config)} ${JSON.stringify(validate.errors?.slice(0, 2))}`,
      );
    }),
    { numRuns: 2000, seed: 36 },
  );
});
