// credentials.signIn (issue 33): the gateway's client at auth.jwt's issuer, where a connect link's person
// signs in. Its defaults, and the load errors that say what to change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const JWT = { issuer: 'https://idp.example.com', jwksUrl: 'https://idp.example.com/jwks', audience: 'https://gw.example.com/mcp' };
const configWith = (signIn?: Record<string, unknown>) => ({
  listen: { publicUrl: 'https://gw.example.com' },
  auth: { jwt: JWT },
  credentials: { key: 'k'.repeat(32), ...(signIn ? { signIn } : {}) },
  servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
});

test('left out, signIn asks for openid with no pre-registered client; given, its client is kept', () => {
  assert.deepEqual(parseConfig(configWith(), 'test.yaml', BASE, {}).credentials?.signIn, { scopes: ['openid'] });
  const given = parseConfig(configWith({ clientId: 'gw-sign-in', clientSecret: 's', scopes: ['openid', 'email'] }), 'test.yaml', BASE, {});
  assert.deepEqual(given.credentials?.signIn, { clientId: 'gw-sign-in', clientSecret: 's', scopes: ['openid', 'email'] });
});

test('refused, each with the fix: a secret without its clientId, a secret method without a secret, no scopes, an unknown key', () => {
  assert.ok(configProblems(configWith({ clientSecret: 's' })).some((p) => p.includes('credentials.signIn.clientSecret: give the clientId it belongs to')));
  assert.ok(
    configProblems(configWith({ clientId: 'gw', authMethod: 'client_secret_post' })).some((p) => p.includes('client_secret_post needs clientSecret; set authMethod: none')),
  );
  assert.ok(configProblems(configWith({ scopes: [] })).some((p) => /credentials\.signIn\.scopes.*give at least openid/.test(p)));
  assert.ok(configProblems(configWith({ client: 'gw' })).some((p) => p.includes("unknown key 'client'")));
});
