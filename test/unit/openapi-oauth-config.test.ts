// servers.<name>.credentials type oauth on an openapi: server (issue 49): a REST API sends no 401 to discover
// its authorization server from, so the config names it (issuer), and the tokens are for the API's baseUrl
// (or the resource given). What is missing or meant for another kind of server is refused with the fix named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type OpenApiServerConfig, parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const OAUTH = { type: 'oauth', issuer: 'https://login.example.com', clientId: 'gw', clientSecret: 's' };
const WHOLE = { listen: { publicUrl: 'https://gw.example.com' }, credentials: { key: 'k'.repeat(32) } };

function withServer(server: Record<string, unknown>, rest: Record<string, unknown> = WHOLE): unknown {
  return {
    ...rest,
    servers: { billing: { openapi: './billing.yaml', baseUrl: 'https://billing.example.com/v2', ...server } },
  };
}

function has(found: string[], ...parts: string[]): void {
  assert.ok(
    found.some((problem) => parts.every((part) => problem.includes(part))),
    `no problem with ${parts.join(' & ')}:\n${found.join('\n')}`,
  );
}

test('type oauth with an issuer loads on an openapi: server', () => {
  const config = parseConfig(withServer({ credentials: { ...OAUTH, scopes: ['invoices.read'] } }), 't.yaml', BASE, {});
  const billing = config.servers.billing as OpenApiServerConfig;
  assert.equal(billing.transport, 'openapi');
  assert.equal(billing.credentials?.type === 'oauth' && billing.credentials.issuer, 'https://login.example.com');
  assert.deepEqual(billing.credentials?.type === 'oauth' && billing.credentials.scopes, ['invoices.read']);
});

test('without issuer: refused, saying a REST API sends no 401 and naming the key to add', () => {
  const { issuer: _issuer, ...rest } = OAUTH;
  has(configProblems(withServer({ credentials: rest })), 'servers.billing.credentials.issuer', 'no 401', 'issuer:');
});

test('an issuer over plain http off loopback is refused; on loopback it loads', () => {
  has(
    configProblems(withServer({ credentials: { ...OAUTH, issuer: 'http://login.example.com' } })),
    'servers.billing.credentials.issuer',
    'https',
  );
  parseConfig(withServer({ credentials: { ...OAUTH, issuer: 'http://127.0.0.1:9000' } }), 't.yaml', BASE, {});
});

test('without baseUrl the resource must be named; with credentials.resource it loads', () => {
  const raw = (credentials: Record<string, unknown>) => ({
    ...WHOLE,
    servers: { billing: { openapi: './billing.yaml', credentials } },
  });
  has(configProblems(raw(OAUTH)), 'servers.billing.credentials', 'servers.billing.baseUrl', 'resource');
  parseConfig(raw({ ...OAUTH, resource: 'https://billing.example.com' }), 't.yaml', BASE, {});
});

test('env is refused on an openapi: server: the token goes as Authorization', () => {
  has(
    configProblems(withServer({ credentials: { ...OAUTH, env: 'BILLING_TOKEN' } })),
    'servers.billing.credentials.env',
    'remove it',
  );
});

test('the store and publicUrl are needed, as for any server with type oauth', () => {
  const found = configProblems(withServer({ credentials: OAUTH }, {}));
  has(found, 'servers.billing.credentials', 'credentials: { key:');
  has(found, 'servers.billing.credentials', 'listen.publicUrl');
});

test('a static Authorization header beside it is refused', () => {
  has(
    configProblems(withServer({ credentials: OAUTH, headers: { Authorization: 'Bearer x' } })),
    'remove servers.billing.headers.Authorization',
  );
});
