// credentials.signIn (issue 33): the gateway's client at auth.jwt's issuer, where a connect link's person
// signs in. Its defaults, and the load errors that say what to change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const JWT = {
  issuer: 'https://idp.example.com',
  jwksUrl: 'https://idp.example.com/jwks',
  audience: 'https://gw.example.com/mcp',
};
const configWith = (signIn?: Record<string, unknown>) => ({
  listen: { publicUrl: 'https://gw.example.com' },
  auth: { jwt: JWT },
  credentials: { key: 'k'.repeat(32), ...(signIn ? { signIn } : {}) },
  servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
});

test('left out, signIn asks for openid with no pre-registered client; given, its client is kept', () => {
  assert.deepEqual(parseConfig(configWith(), 'test.yaml', BASE, {}).credentials?.signIn, { scopes: ['openid'] });
  const given = parseConfig(
    configWith({ clientId: 'gw-sign-in', clientSecret: 's', scopes: ['openid', 'email'] }),
    'test.yaml',
    BASE,
    {},
  );
  assert.deepEqual(given.credentials?.signIn, {
    clientId: 'gw-sign-in',
    clientSecret: 's',
    scopes: ['openid', 'email'],
  });
});

test(
  'refused, each with the fix: a secret without its clientId, a secret method without a secret, no scopes, an ' +
    'unknown key',
  () => {
    assert.ok(
      configProblems(configWith({ clientSecret: 's' })).some((p) =>
        p.includes('credentials.signIn.clientSecret: give the clientId it belongs to'),
      ),
    );
    assert.ok(
      configProblems(configWith({ clientId: 'gw', authMethod: 'client_secret_post' })).some((p) =>
        p.includes('client_secret_post needs clientSecret; set authMethod: none'),
      ),
    );
    assert.ok(
      configProblems(configWith({ scopes: [] })).some((p) =>
        /credentials\.signIn\.scopes.*give at least openid/.test(p),
      ),
    );
    assert.ok(configProblems(configWith({ client: 'gw' })).some((p) => p.includes("unknown key 'client'")));
  },
);

test(
  'auth.jwt.issuer over plain http elsewhere is refused at load when connect links are made (people sign in ' +
    'there first); https, loopback and a non-URL issuer load',
  () => {
    const withIssuer = (
      issuer: string,
      servers: Record<string, unknown> = {
        crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } },
      },
    ) => ({
      ...configWith(),
      auth: { jwt: { ...JWT, issuer } },
      servers,
    });
    const found = configProblems(withIssuer('http://idp.example.com'));
    assert.ok(
      found.some(
        (p) =>
          p.startsWith('auth.jwt.issuer: a person opening a connect link signs in at http://idp.example.com first') &&
          p.includes("give the issuer's https:// URL"),
      ),
      found.join('\n'),
    );
    // A perCaller server with secrets makes links too.
    const secrets = { tools: { command: 'node', perCaller: true, secrets: { TOKEN: { prompt: 'your token' } } } };
    assert.ok(
      configProblems(withIssuer('HTTP://idp.example.com', secrets)).some((p) => p.startsWith('auth.jwt.issuer:')),
    );
    for (const fine of ['https://idp.example.com', 'http://127.0.0.1:9', 'http://localhost:9', 'my-issuer'])
      parseConfig(withIssuer(fine), 'test.yaml', BASE, {});
    // No server makes connect links: nobody signs in, so the issuer is only a name in callers' tokens.
    parseConfig(withIssuer('http://idp.example.com', { local: { command: 'node' } }), 'test.yaml', BASE, {});
  },
);
