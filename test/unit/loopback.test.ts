// The small predicates behind issue #16, each with the inputs an attacker would try: loopback by parsed
// address (not prefix), the Host check, single-valued headers sent twice, mrtr.peers, a child's
// environment, and the config errors that name the fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnvironment } from '../../src/child-env.js';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { hostChecker } from '../../src/edge/host-check.js';
import { repeatedSingleHeader } from '../../src/edge/single-headers.js';
import { peerChecker } from '../../src/mrtr/peers.js';
import { hostOfAuthority, isLoopbackHost, isSecureOrLoopback } from '../../protocol/loopback.js';

test('loopback: localhost, ::1 and 127.0.0.0/8 literals only; names that merely begin with 127. are not', () => {
  for (const host of [
    'localhost',
    'LOCALHOST',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '127.0.0.1',
    '127.255.255.254',
    '127.1.2.3',
  ])
    assert.ok(isLoopbackHost(host), host);
  for (const host of [
    '127.attacker.example',
    '127.0.0.1.nip.io',
    '127.0.0.1.',
    '128.0.0.1',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    'localhost.evil.example',
    '[::1',
    '',
  ])
    assert.ok(!isLoopbackHost(host), host);
});

test('where credentials may go: https anywhere, plain http only to this machine', () => {
  for (const url of [
    'https://idp.example.com/token',
    'https://127.0.0.1/x',
    'http://127.0.0.1:9/token',
    'http://localhost/x',
    'http://[::1]:8080/x',
    new URL('http://127.0.0.2/'),
  ])
    assert.ok(isSecureOrLoopback(url), String(url));
  for (const url of [
    'http://idp.example.com/token',
    'http://127.attacker.example/x',
    'http://0.0.0.0/x',
    'ftp://127.0.0.1/x',
    'not a url',
    '',
    'javascript:alert(1)',
  ])
    assert.ok(!isSecureOrLoopback(url), url);
});

test('the host of a Host header or authority', () => {
  assert.equal(hostOfAuthority('[::1]:8080'), '::1');
  assert.equal(hostOfAuthority('127.0.0.1:80'), '127.0.0.1');
  assert.equal(hostOfAuthority('example.com'), 'example.com');
  assert.equal(hostOfAuthority('::1'), '::1');
});

test(
  'Host check: on loopback only loopback names and listen.allowedHosts; nothing checked beyond loopback without ' +
    'a list',
  () => {
    const check = hostChecker('127.0.0.1', ['gateway.test'])!;
    for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080', 'gateway.test', 'Gateway.Test:443'])
      assert.ok(check(host), host);
    for (const host of ['127.evil.example:8080', 'evil.example', '', 'gateway.test.evil.example'])
      assert.ok(!check(host), host);
    assert.ok(check(undefined), 'no Host at all is HTTP/1.0 (a health probe); a browser always sends one');
    assert.ok(check('127.0.0.1:8080'), 'a remembered header still passes');
    assert.equal(hostChecker('0.0.0.0', []), undefined);
    assert.ok(!hostChecker('0.0.0.0', ['gw.example'])!('evil.example'));
  },
);

test('a single-valued header sent twice is found, in any spelling; other repeats are not', () => {
  assert.equal(repeatedSingleHeader(['Authorization', 'a', 'authorization', 'b']), 'authorization');
  assert.equal(repeatedSingleHeader(['MCP-METHOD', 'a', 'Mcp-Method', 'b']), 'mcp-method');
  assert.equal(repeatedSingleHeader(['mcp-name', 'a', 'Host', 'h', 'MCP-Name', 'b']), 'mcp-name');
  assert.equal(
    repeatedSingleHeader(['mcp-protocol-version', 'a', 'Mcp-Protocol-Version', 'a']),
    'mcp-protocol-version',
  );
  assert.equal(
    repeatedSingleHeader([
      'Accept',
      'a',
      'Accept',
      'b',
      'Mcp-Param-X',
      '1',
      'Mcp-Param-X',
      '2',
      'User-Agent',
      'u',
      'Connection',
      'c',
    ]),
    undefined,
  );
  assert.equal(
    repeatedSingleHeader(['authorization', 'a', 'mcp-method', 'm', 'mcp-name', 'n', 'mcp-protocol-version', 'v']),
    undefined,
  );
});

test('mrtr.peers: by default loopback and private addresses; a list replaces the default', () => {
  const byDefault = peerChecker([]);
  for (const url of [
    'http://127.0.0.1:8080',
    'http://[::1]:1',
    'http://10.1.2.3:8080',
    'http://172.16.0.1',
    'http://192.168.1.1',
    'http://[fd00::1]:80',
    'http://localhost:1',
  ])
    assert.ok(byDefault(url), url);
  for (const url of [
    'http://203.0.113.9',
    'http://172.32.0.1',
    'http://gateway.example.com',
    'http://127.attacker.example',
    'file:///etc/passwd',
    'not a url',
  ])
    assert.ok(!byDefault(url), url);
  const listed = peerChecker(['10.0.0.0/8', 'gw-1.internal', '203.0.113.9']);
  for (const url of ['http://10.9.9.9:8080', 'https://GW-1.internal', 'http://203.0.113.9'])
    assert.ok(listed(url), url);
  for (const url of ['http://127.0.0.1:8080', 'http://192.168.1.1', 'http://gw-2.internal'])
    assert.ok(!listed(url), url);
});

test("a child's environment: the base list, inheritEnv, its own env; never what the config reads", () => {
  const parent = { PATH: '/bin', HOME: '/h', LC_ALL: 'C', API_KEY: 'k', AWS_REGION: 'eu', AWS_SECRET: 's', OTHER: 'o' };
  const { env, withheld } = childEnvironment(parent, ['AWS_*'], new Set(['AWS_SECRET', 'API_KEY']), {
    OWN: '1',
    PATH: '/custom',
  });
  assert.deepEqual(env, { PATH: '/custom', HOME: '/h', LC_ALL: 'C', AWS_REGION: 'eu', OWN: '1' });
  assert.deepEqual(withheld, ['AWS_SECRET']);
});

function problems(raw: unknown, env: Record<string, string> = {}): string[] {
  try {
    parseConfig(raw, 't', '/tmp', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

test('config errors name the fix', () => {
  assert.match(
    problems({ listen: { host: '127.evil.example' }, servers: {} }).join('\n'),
    /listen\.host 127\.evil\.example is reachable from other machines and there is no auth: section; add auth/,
  );
  assert.deepEqual(problems({ listen: { host: '127.0.0.2' }, servers: {} }), []);
  const inherit = problems(
    { servers: { a: { command: 'x', inheritEnv: ['TOKEN'], args: ['${TOKEN}'] } } },
    { TOKEN: 't' },
  ).join('\n');
  assert.match(
    inherit,
    /servers\.a\.inheritEnv: TOKEN is read by this config .*servers\.a\.env: \{ TOKEN: "\$\{TOKEN\}" \}/,
  );
  assert.match(
    problems({ servers: { a: { command: 'x', inheritEnv: ['A-B'] } } }).join('\n'),
    /servers\.a\.inheritEnv\.0: name environment variables/,
  );
  assert.match(
    problems({ listen: { allowedHosts: ['http://x.example/'] }, servers: {} }).join('\n'),
    /listen\.allowedHosts\.0: a host name or address without scheme, port or path/,
  );
  assert.match(
    problems({ mrtr: { peers: ['10.0.0.0/33', 'a b'] }, servers: {} }).join('\n'),
    /mrtr\.peers\.0: "10\.0\.0\.0\/33" is not a CIDR.*\n.*mrtr\.peers\.1: "a b" is neither/,
  );
  assert.match(
    problems({ auth: { anonymous: true, operators: {} }, servers: {} }).join('\n'),
    /auth\.operators: name the ids or groups/,
  );
  const parsed = parseConfig({ servers: { a: { command: 'x', args: ['${TOKEN}', '${CONFIG_DIR}'] } } }, 't', '/tmp', {
    TOKEN: 't',
  });
  assert.deepEqual(parsed.envReads, ['TOKEN']);
});
