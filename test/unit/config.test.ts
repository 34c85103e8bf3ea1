import { createHash } from 'node:crypto';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  parseConfig,
  loadConfigFile,
  ConfigError,
  ConfigFileMissing,
  type ServerConfig,
  type StdioServerConfig,
} from '../../src/config/config.js';
import { tempDir } from '../temp.js';
import { BASE, configError } from '../config-problems.js';

function stdioOf(server: ServerConfig | undefined): StdioServerConfig {
  assert.equal(server?.transport, 'stdio');
  return server as StdioServerConfig;
}

const one = (server: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  servers: { a: { command: 'node', ...server } },
  ...rest,
});

test('defaults for listen and for a server', () => {
  const config = parseConfig(one({}), 'test.yaml', BASE, {});
  assert.equal(config.listen.host, '127.0.0.1');
  assert.equal(config.listen.port, 8080);
  assert.deepEqual(config.listen.allowedOrigins, []);
  assert.equal(config.listen.maxBodyBytes, 4 * 1024 * 1024);
  const a = stdioOf(config.servers.a);
  assert.equal(a.command, 'node');
  assert.equal(a.timeoutMs, 60_000);
  assert.equal(a.era, 'auto');
  assert.deepEqual(a.args, []);
  assert.deepEqual(a.env, {});
  assert.equal(a.cwd, BASE);
});

test('a relative cwd is resolved against baseDir; an absolute one is kept', () => {
  const config = parseConfig(
    { servers: { a: { command: 'x', cwd: 'sub/dir' }, b: { command: 'y', cwd: '/abs/place' } } },
    't',
    BASE,
    {},
  );
  assert.equal(stdioOf(config.servers.a).cwd, path.join(BASE, 'sub/dir'));
  assert.equal(stdioOf(config.servers.b).cwd, path.resolve('/abs/place'));
});

test('given values override defaults', () => {
  const config = parseConfig(
    one(
      { era: 'legacy', timeoutMs: 5, args: ['x'] },
      { listen: { host: '0.0.0.0', port: 0, allowedOrigins: ['https://a.example'] }, auth: { anonymous: true } },
    ),
    't',
    BASE,
    {},
  );
  assert.equal(config.listen.host, '0.0.0.0');
  assert.equal(config.listen.port, 0);
  assert.deepEqual(config.listen.allowedOrigins, ['https://a.example']);
  assert.equal(stdioOf(config.servers.a).era, 'legacy');
  assert.equal(stdioOf(config.servers.a).timeoutMs, 5);
  assert.deepEqual(stdioOf(config.servers.a).args, ['x']);
});

test('${VAR} is replaced from the given env, in strings nested in arrays and maps', () => {
  const config = parseConfig(one({ args: ['--token=${TOKEN}', 'x'], env: { HOME_DIR: '${HOME_X}/data' } }), 't', BASE, {
    TOKEN: 's3cret',
    HOME_X: '/h',
  });
  assert.deepEqual(stdioOf(config.servers.a).args, ['--token=s3cret', 'x']);
  assert.deepEqual(stdioOf(config.servers.a).env, { HOME_DIR: '/h/data' });
});

test('${VAR:-default} uses the default when unset and the value when set', () => {
  const raw = one({ env: { A: '${UNSET_A:-fallback}', B: '${SET_B:-fallback}', C: '${UNSET_C:-}' } });
  const config = parseConfig(raw, 't', BASE, { SET_B: 'real' });
  assert.deepEqual(stdioOf(config.servers.a).env, { A: 'fallback', B: 'real', C: '' });
});

test('${VAR:-default} uses the default when VAR is set but empty (shell/compose semantics of ":-")', () => {
  const config = parseConfig(one({ env: { A: '${EMPTY:-fallback}' } }), 't', BASE, { EMPTY: '' });
  assert.equal(stdioOf(config.servers.a).env.A, 'fallback');
});

test('$$ is a literal $ and protects a ${…} from expansion', () => {
  const config = parseConfig(one({ env: { PRICE: 'costs $$5', RAW: '$${NOT_EXPANDED}' } }), 't', BASE, {});
  assert.deepEqual(stdioOf(config.servers.a).env, { PRICE: 'costs $5', RAW: '${NOT_EXPANDED}' });
});

test('the process env is not consulted when an env is passed', () => {
  process.env.MCP_GATEWAY_TEST_ONLY_VAR = 'from-process';
  try {
    const e = configError(() => parseConfig(one({ env: { X: '${MCP_GATEWAY_TEST_ONLY_VAR}' } }), 't', BASE, {}));
    assert.match(e.message, /MCP_GATEWAY_TEST_ONLY_VAR/);
  } finally {
    delete process.env.MCP_GATEWAY_TEST_ONLY_VAR;
  }
});

test('a missing variable → ConfigError naming the key path and the variable', () => {
  const e = configError(() => parseConfig(one({ env: { TOKEN: '${API_TOKEN}' } }), 'gw.yaml', BASE, {}));
  assert.equal(e.source, 'gw.yaml');
  assert.equal(e.problems.length, 1);
  assert.match(e.message, /servers\.a\.env\.TOKEN/);
  assert.match(e.message, /API_TOKEN/);
  assert.match(e.message, /gw\.yaml/);
});

test('a missing variable inside an array names the index', () => {
  const e = configError(() => parseConfig(one({ args: ['ok', '${NOPE}'] }), 't', BASE, {}));
  assert.match(e.message, /servers\.a\.args\.1/);
});

test('every missing variable is reported, not only the first', () => {
  const e = configError(() => parseConfig(one({ env: { A: '${V1}', B: '${V2}' } }), 't', BASE, {}));
  assert.equal(e.problems.length, 2);
});

test('a bad server name → error naming the path', () => {
  const e = configError(() => parseConfig({ servers: { 'bad name!': { command: 'x' } } }, 't', BASE, {}));
  assert.match(e.message, /servers\.bad name!/);
});

test('a bad server name → error stating the allowed pattern', () => {
  const e = configError(() => parseConfig({ servers: { 'bad name!': { command: 'x' } } }, 't', BASE, {}));
  assert.match(e.message, /1-32 characters/);
});

test('a wrong type names the key path (listen.port)', () => {
  const e = configError(() => parseConfig(one({}, { listen: { port: 'x' } }), 't', BASE, {}));
  assert.match(e.message, /listen\.port/);
  assert.match(e.message, /number/);
});

test('an unknown key is named (timeoutMS)', () => {
  const e = configError(() => parseConfig(one({ timeoutMS: 1000 }), 't', BASE, {}));
  assert.match(e.message, /servers\.a/);
  assert.match(e.message, /'timeoutMS'/);
});

test('an unknown top-level key is named', () => {
  const e = configError(() => parseConfig(one({}, { listne: {} }), 't', BASE, {}));
  assert.match(e.message, /'listne'/);
});

test('an invalid era lists the valid values', () => {
  const e = configError(() => parseConfig(one({ era: 'new' }), 't', BASE, {}));
  assert.match(e.message, /servers\.a\.era/);
  for (const v of ['auto', 'modern', 'legacy']) assert.match(e.message, new RegExp(`"${v}"`));
});

test('a missing command and a missing servers map are errors', () => {
  configError(() => parseConfig({ servers: { a: {} } }, 't', BASE, {}));
  const e = configError(() => parseConfig({}, 't', BASE, {}));
  assert.match(e.message, /servers/);
});

test(
  'a server with neither command nor url (c: {} or c: alone) is told it needs one of them; transport names its ' +
    'values',
  () => {
    const needs =
      'a server needs either command: (a program the gateway runs over stdio), url: (a remote MCP endpoint) ' +
      'or openapi: (a REST API from its OpenAPI document)';
    const e = configError(() => parseConfig({ servers: { c: {}, d: null, e: { transport: 'ftp' } } }, 't', BASE, {}));
    assert.equal(e.problems.length, 3, e.problems.join('\n'));
    assert.ok(e.problems[0]!.startsWith(`servers.c: ${needs}, for example `), e.problems[0]);
    assert.ok(e.problems[1]!.startsWith(`servers.d: ${needs}, for example `), e.problems[1]);
    assert.equal(e.problems[2], 'servers.e.transport: must be one of "stdio", "http", "sse", "openapi"');
  },
);

const tmp = tempDir('mcp-gateway-config-test-');
after(() => rmSync(tmp, { recursive: true, force: true }));

test(
  'loadConfigFile on a missing file → ConfigFileMissing saying it does not exist, ' + 'with the path resolved',
  async () => {
    const file = path.relative(process.cwd(), path.join(tmp, 'does-not-exist.yaml'));
    await assert.rejects(loadConfigFile(file, {}), (error: unknown) => {
      assert.ok(error instanceof ConfigFileMissing);
      assert.equal(error.resolved, path.join(tmp, 'does-not-exist.yaml'));
      assert.equal(error.message, `the config file ${path.join(tmp, 'does-not-exist.yaml')} does not exist`);
      return true;
    });
  },
);

test('loadConfigFile on invalid YAML → ConfigError saying so', async () => {
  const file = path.join(tmp, 'broken.yaml');
  writeFileSync(file, 'servers:\n  a: {command: node\n  b: [unclosed\n');
  await assert.rejects(loadConfigFile(file, {}), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(
      error.message,
      new RegExp(
        String.raw`not valid YAML: .* at line 3, column 3:\n {2}2 \| {3}a: \{command: node\n` +
          String.raw` {2}3 \| {3}b: \[unclosed\n` +
          String.raw` {4}\| {3}\^\n {2}Start the keys of one map in the same column`,
      ),
    );
    return true;
  });
});

test('loadConfigFile on an unquoted * value → ConfigError at its line saying to quote it, not a crash', async () => {
  const file = path.join(tmp, 'alias.yaml');
  writeFileSync(file, 'listen:\n  allowedOrigins: [*.example.com]\nservers: {}\n');
  await assert.rejects(loadConfigFile(file, {}), (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(
      error.message,
      `${file} is not valid YAML: a value that begins with * is an alias in YAML, and no anchor is named ` +
        `.example.com at line 2, column 20:\n` +
        '  1 | listen:\n  2 |   allowedOrigins: [*.example.com]\n    |                    ^\n  Quote the value, for ' +
        'example  "*.example.com"',
    );
    return true;
  });
});

test('loadConfigFile on a valid file expands env and resolves cwd against the file folder', async () => {
  const file = path.join(tmp, 'ok.yaml');
  writeFileSync(
    file,
    'listen:\n  host: ${HOST:-127.0.0.1}\nservers:\n  mem:\n    command: node\n    cwd: work\n    env:\n      ' +
      'TOKEN: ${TOKEN}\n',
  );
  const config = await loadConfigFile(file, { TOKEN: 't0k' });
  assert.equal(config.listen.host, '127.0.0.1');
  assert.equal(stdioOf(config.servers.mem).cwd, path.join(tmp, 'work'));
  assert.deepEqual(stdioOf(config.servers.mem).env, { TOKEN: 't0k' });
});

test('loadConfigFile on an empty file → ConfigError (servers is required), not a crash', async () => {
  const file = path.join(tmp, 'empty.yaml');
  writeFileSync(file, '');
  await assert.rejects(loadConfigFile(file, {}), ConfigError);
});

test('a numeric key written as ${VAR} (YAML reads it as a string) is usable after expansion', async () => {
  const file = path.join(tmp, 'port.yaml');
  writeFileSync(file, 'listen:\n  port: ${PORT:-8080}\nservers:\n  a:\n    command: node\n');
  const config = await loadConfigFile(file, { PORT: '9090' });
  assert.equal(config.listen.port, 9090);
});

test('${CONFIG_DIR} is the config file folder unless the environment sets it', () => {
  const raw = { servers: { a: { command: 'node', env: { FILE: '${CONFIG_DIR}/data.jsonl' } } } };
  assert.equal(stdioOf(parseConfig(raw, 't', '/srv/gw', {}).servers.a).env.FILE, '/srv/gw/data.jsonl');
  assert.equal(
    stdioOf(parseConfig(raw, 't', '/srv/gw', { CONFIG_DIR: '/elsewhere' }).servers.a).env.FILE,
    '/elsewhere/data.jsonl',
  );
});

test('a server with a url is a remote upstream; static headers take ${VAR}', () => {
  const config = parseConfig(
    { servers: { r: { url: 'http://127.0.0.1:9000/mcp', headers: { authorization: 'Bearer ${TOKEN}' } } } },
    't',
    BASE,
    { TOKEN: 'abc' },
  );
  const r = config.servers.r!;
  assert.equal(r.transport, 'http');
  assert.deepEqual(r.transport === 'http' && r.headers, { authorization: 'Bearer abc' });
});

test('a url that is not http(s) names the key', () => {
  const e = configError(() => parseConfig({ servers: { r: { url: 'ftp://x/mcp' } } }, 't', BASE, {}));
  assert.match(e.message, /servers\.r\.url: give the server's MCP endpoint as an http:\/\/ or https:\/\/ URL/);
});

test('stdio keys on a remote server are unknown keys; command: beside url: names both kinds', () => {
  const e = configError(() =>
    parseConfig({ servers: { r: { url: 'http://127.0.0.1:1/mcp', args: ['x'] } } }, 't', BASE, {}),
  );
  assert.match(e.message, /servers\.r: unknown key 'args'/);
  const both = configError(() =>
    parseConfig({ servers: { r: { url: 'http://127.0.0.1:1/mcp', command: 'node' } } }, 't', BASE, {}),
  );
  assert.match(both.message, /servers\.r: command and url each name a kind of server; give one/);
});

test('prefixes where one begins the other are refused, naming both servers and the setting', () => {
  const e = configError(() => parseConfig({ servers: { a: { command: 'x' }, a__b: { command: 'y' } } }, 't', BASE, {}));
  assert.match(e.message, /servers\.a and servers\.a__b could give two tools the same name on \/mcp/);
  assert.match(e.message, /set servers\.a__b\.prefix/);
  const same = configError(() =>
    parseConfig({ servers: { a: { command: 'x', prefix: 'p' }, b: { command: 'y', prefix: 'p' } } }, 't', BASE, {}),
  );
  assert.equal(same.problems.length, 1);
  assert.doesNotThrow(() => parseConfig({ servers: { a: { command: 'x' }, ab: { command: 'y' } } }, 't', BASE, {}));
});

test('auth: API keys are kept as SHA-256 only; a key: entry is hashed at load', () => {
  const config = parseConfig(
    one(
      {},
      {
        auth: {
          apiKeys: [
            { key: 'k-0123456789abcdef', principal: 'ci', groups: ['bots'] },
            { sha256: 'AB'.repeat(32), principal: 'ann' },
          ],
        },
      },
    ),
    't',
    BASE,
    {},
  );
  assert.deepEqual(config.auth!.apiKeys, [
    { sha256: createHash('sha256').update('k-0123456789abcdef').digest('hex'), principal: 'ci', groups: ['bots'] },
    { sha256: 'ab'.repeat(32), principal: 'ann', groups: [] },
  ]);
  assert.doesNotMatch(JSON.stringify(config), /k-0123456789abcdef/);
});

test('auth mistakes are refused with the fix named', () => {
  const problems = (rest: Record<string, unknown>) =>
    configError(() => parseConfig(one({}, rest), 't', BASE, {})).problems.join('\n');
  assert.match(
    problems({ auth: { apiKeys: [{ key: 'short', principal: 'a' }] } }),
    /auth\.apiKeys\.0\.key: an API key must be at least 16 characters/,
  );
  assert.match(
    problems({ auth: { apiKeys: [{ key: 'k-0123456789abcdef', sha256: 'ab'.repeat(32), principal: 'a' }] } }),
    /exactly one of sha256 .* or key/,
  );
  assert.match(
    problems({ auth: { anonymous: false } }),
    /auth: nobody could call: add apiKeys or jwt, or set anonymous: true/,
  );
  assert.match(
    problems({ auth: { jwt: { issuer: 'https://idp.example', jwksUrl: 'https://idp.example/jwks' } } }),
    /auth\.jwt: set auth\.oauth\.resource .* or auth\.jwt\.audience/,
  );
  assert.match(
    problems({ auth: { jwt: { issuer: 'https://idp.example', audience: 'gw' } } }),
    /exactly one of jwksUrl, jwksFile or publicKeyFile/,
  );
  assert.match(
    problems({ auth: { jwt: { issuer: 'i', audience: 'gw', jwksUrl: 'https://x/j', algorithms: ['none'] } } }),
    /auth\.jwt\.algorithms\.0: must be one of "RS256"/,
  );
  assert.match(
    problems({ listen: { host: '0.0.0.0' } }),
    /listen\.host 0\.0\.0\.0 is reachable from other machines and there is no auth: section/,
  );
});

test('policies are compiled at load: bad globs, CEL and unknown servers are config errors', () => {
  const problems = configError(() =>
    parseConfig(
      one(
        {},
        {
          policies: [
            {
              name: 'p',
              principals: { groups: ['g'] },
              allow: { servers: ['nope'], tools: ['a__['] },
              when: [{ tool: 'a__*', expr: 'args.n <=' }],
            },
            { name: 'q', principals: {} },
          ],
        },
      ),
      't',
      BASE,
      {},
    ),
  ).problems.join('\n');
  assert.match(problems, /policies\[0\] \(p\)\.allow\.servers: no server is named "nope"; servers are a/);
  assert.match(problems, /policies\[0\] \(p\)\.when\[0\]\.expr: "args\.n <=" does not compile/);
  assert.match(problems, /policies\[1\] \(q\)\.principals: name ids or groups/);
});

test('relative pinsFile, audit file and key files are resolved against the config folder', () => {
  const config = parseConfig(
    one(
      {},
      {
        pinsFile: 'pins.json',
        audit: { destination: 'audit/log.jsonl' },
        auth: { jwt: { issuer: 'i', audience: 'gw', publicKeyFile: 'keys/pub.pem' } },
      },
    ),
    't',
    BASE,
    {},
  );
  assert.equal(config.pinsFile, path.join(BASE, 'pins.json'));
  assert.equal(config.audit.destination, path.join(BASE, 'audit/log.jsonl'));
  assert.equal(config.auth!.jwt!.publicKeyFile, path.join(BASE, 'keys/pub.pem'));
  assert.equal(parseConfig(one({}), 't', BASE, {}).audit.destination, 'stderr');
});
