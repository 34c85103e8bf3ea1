// servers.<name>.credentials on a perCaller stdio server (issue 34): each caller's OAuth token in their
// child's environment. The keys a child needs (env, issuer) and what cannot work are refused at load with
// the fix named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, type StdioServerConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const OAUTH = {
  type: 'oauth',
  clientId: 'gw',
  clientSecret: 'gh-secret',
  scopes: ['repo'],
  env: 'GITHUB_TOKEN',
  issuer: 'https://idp.example.com',
  resource: 'https://api.example.com',
};
const WHOLE = {
  listen: { publicUrl: 'https://gw.example.com' },
  credentials: { key: 'k'.repeat(32) },
  auth: { apiKeys: [{ key: 'alice-key-0123456789abcdef', principal: 'alice' }] },
};

function withServer(server: Record<string, unknown>, rest: Record<string, unknown> = WHOLE): unknown {
  return { ...rest, servers: { github: { command: 'node', args: ['server.js'], perCaller: true, ...server } } };
}

function has(found: string[], ...parts: string[]): void {
  assert.ok(
    found.some((problem) => parts.every((part) => problem.includes(part))),
    `no problem with ${parts.join(' & ')}:\n${found.join('\n')}`,
  );
}

test('the example loads: env, issuer and resource kept on the stdio server', () => {
  const config = parseConfig(withServer({ credentials: OAUTH }), 'test.yaml', BASE, {});
  const github = config.servers.github as StdioServerConfig;
  assert.equal(github.credentials?.type, 'oauth');
  assert.equal(github.credentials?.type === 'oauth' && github.credentials.env, 'GITHUB_TOKEN');
  assert.equal(github.credentials?.type === 'oauth' && github.credentials.issuer, 'https://idp.example.com');
});

test('without perCaller: refused, naming perCaller: true', () => {
  has(
    configProblems(withServer({ perCaller: false, credentials: OAUTH })),
    'servers.github.credentials',
    'perCaller: true',
  );
});

test('without env: refused, naming the key and an example', () => {
  const { env: _env, ...rest } = OAUTH;
  has(configProblems(withServer({ credentials: rest })), 'servers.github.credentials.env', 'env: GITHUB_TOKEN');
});

test('an env that is no variable name is refused', () => {
  has(configProblems(withServer({ credentials: { ...OAUTH, env: 'GITHUB TOKEN' } })), 'environment variable');
});

test('without issuer: refused, saying a child has no 401 to discover from', () => {
  const { issuer: _issuer, ...rest } = OAUTH;
  has(configProblems(withServer({ credentials: rest })), 'servers.github.credentials.issuer', 'no 401');
});

test('an issuer that is no URL is refused', () => {
  has(configProblems(withServer({ credentials: { ...OAUTH, issuer: 'idp.example.com' } })), 'issuer URL');
});

test('tokenExchange on a stdio server is refused, naming type oauth', () => {
  const exchange = {
    type: 'tokenExchange',
    tokenEndpoint: 'https://idp.example.com/token',
    clientId: 'gw',
    clientSecret: 's',
  };
  has(
    configProblems(
      withServer(
        { credentials: exchange },
        { ...WHOLE, auth: { jwt: { issuer: 'https://idp.example.com', jwksUrl: 'https://idp.example.com/jwks' } } },
      ),
    ),
    'type: oauth',
    'remote servers',
  );
});

test('env or resource on a remote server is refused: it names its own', () => {
  const found = configProblems({
    ...WHOLE,
    servers: { crm: { url: 'https://crm.example.com/mcp', credentials: OAUTH } },
  });
  for (const key of ['env', 'resource']) has(found, `servers.crm.credentials.${key}`, 'remove it');
});

test('the same variable in env: is refused: the caller’s token replaces it', () => {
  has(
    configProblems(withServer({ credentials: OAUTH, env: { GITHUB_TOKEN: 'shared' } })),
    'servers.github.credentials.env',
    'remove it from env',
  );
});

test('secrets: and an OAuth token on one server are refused: keep one', () => {
  has(
    configProblems(withServer({ credentials: OAUTH, secrets: { OTHER: { prompt: 'x' } } })),
    'servers.github.credentials',
    'keep one',
  );
});

test('without auth, a store or publicUrl: each refused, naming what to add', () => {
  has(configProblems(withServer({ credentials: OAUTH }, { ...WHOLE, auth: undefined })), 'configure auth');
  has(configProblems(withServer({ credentials: OAUTH }, { ...WHOLE, credentials: undefined })), 'credentials: { key:');
  has(configProblems(withServer({ credentials: OAUTH }, { ...WHOLE, listen: {} })), 'listen.publicUrl');
});
