// servers.<name>.credentials with type: clientCredentials (the gateway's own service identity, OAuth
// client_credentials): the worked example of docs/configuration.md loads, a key read from a secret file; and what is
// refused at load, each problem naming the key and the fix.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { configProblems } from '../config-problems.js';
import { tempDir } from '../temp.js';

const pem = (type: 'ec' | 'rsa' | 'ed25519' | 'x25519') =>
  generateKeyPairSync(
    type as 'ec',
    {
      namedCurve: 'P-256',
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    } as never,
  ).privateKey as unknown as string;
const EC_KEY = pem('ec');

const crm = (credentials: Record<string, unknown>, server: Record<string, unknown> = {}) => ({
  servers: {
    crm: {
      url: 'https://crm.example.com/mcp',
      ...server,
      credentials: { type: 'clientCredentials', clientId: 'gateway', ...credentials },
    },
  },
});

test('the documented example loads: a key from a secret file, without the per-user store or publicUrl', () => {
  const dir = tempDir('client-credentials-config-');
  writeFileSync(path.join(dir, 'gateway-key.pem'), `${EC_KEY}\n`);
  const config = parseConfig(
    {
      servers: {
        crm: {
          url: 'https://crm.example.com/mcp',
          credentials: {
            type: 'clientCredentials',
            clientId: 'mcp-gateway',
            privateKey: '${file:gateway-key.pem}',
            scopes: ['crm.read'],
          },
        },
        billing: {
          url: 'https://billing.example.com/mcp',
          credentials: { type: 'clientCredentials', clientId: 'mcp-gateway', clientSecret: '${BILLING_SECRET}' },
        },
      },
    },
    'test.yaml',
    dir,
    { BILLING_SECRET: 's3cret' },
  );
  const credentials = config.servers.crm!.transport === 'http' ? config.servers.crm!.credentials : undefined;
  assert.equal(credentials?.type, 'clientCredentials');
  assert.equal(credentials?.type === 'clientCredentials' && credentials.privateKey, EC_KEY.trimEnd());
  const billing = config.servers.billing!;
  assert.equal(
    billing.transport === 'http' &&
      billing.credentials?.type === 'clientCredentials' &&
      billing.credentials.clientSecret,
    's3cret',
  );
});

test('a secret or a key, one of them: neither, or both, is refused naming the keys', () => {
  const neither = configProblems(crm({}));
  assert.ok(
    neither.some((p) => p.startsWith('servers.crm.credentials:') && /clientSecret .* or privateKey/.test(p)),
    neither.join('\n'),
  );
  const both = configProblems(crm({ clientSecret: 's', privateKey: EC_KEY }));
  assert.ok(
    both.some((p) => /clientSecret or privateKey, not both/.test(p)),
    both.join('\n'),
  );
  const noId = configProblems({
    servers: {
      crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'clientCredentials', clientSecret: 's' } },
    },
  });
  assert.ok(
    noId.some((p) => p.startsWith('servers.crm.credentials.clientId')),
    noId.join('\n'),
  );
});

test('a key the gateway cannot sign with is refused at load, without quoting it', () => {
  const garbage = configProblems(crm({ privateKey: 'not-a-key-but-a-secret-value' }));
  const said = garbage.find((p) => p.startsWith('servers.crm.credentials.privateKey'));
  assert.ok(said && /not a PEM private key/.test(said), garbage.join('\n'));
  assert.ok(!said.includes('not-a-key-but'), 'the value is not repeated');
  const x25519 = configProblems(crm({ privateKey: pem('x25519') }));
  assert.ok(
    x25519.some((p) => /privateKey: it is a x25519 key/.test(p)),
    x25519.join('\n'),
  );
  const mismatch = configProblems(crm({ privateKey: EC_KEY, algorithm: 'RS256' }));
  assert.ok(
    mismatch.some((p) => /credentials\.algorithm: it is a ec key, which cannot sign RS256: use ES256/.test(p)),
    mismatch.join('\n'),
  );
  // RSA keys sign RS256 unless told otherwise; PS256 is theirs too.
  assert.doesNotThrow(() => parseConfig(crm({ privateKey: pem('rsa'), algorithm: 'PS256' }), 'test.yaml', '/'));
  assert.doesNotThrow(() => parseConfig(crm({ privateKey: pem('ed25519') }), 'test.yaml', '/'));
});

test('authMethod, transports and token endpoints that do not fit are refused with the fix', () => {
  const jwtNoKey = configProblems(crm({ clientSecret: 's', authMethod: 'private_key_jwt' }));
  assert.ok(
    jwtNoKey.some((p) => /authMethod: private_key_jwt signs with privateKey/.test(p)),
    jwtNoKey.join('\n'),
  );
  const basicNoSecret = configProblems(crm({ privateKey: EC_KEY, authMethod: 'client_secret_basic' }));
  assert.ok(
    basicNoSecret.some((p) => /client_secret_basic sends clientSecret/.test(p)),
    basicNoSecret.join('\n'),
  );
  const clear = configProblems(crm({ clientSecret: 's', tokenEndpoint: 'http://login.example.com/token' }));
  assert.ok(
    clear.some((p) => p.startsWith('servers.crm.credentials.tokenEndpoint') && /https/.test(p)),
    clear.join('\n'),
  );
  const header = configProblems(crm({ clientSecret: 's' }, { headers: { Authorization: 'Bearer x' } }));
  assert.ok(
    header.some((p) => /sends its own token to this server; remove servers\.crm\.headers\.Authorization/.test(p)),
    header.join('\n'),
  );
  const stdio = configProblems({
    servers: {
      notes: { command: 'node', credentials: { type: 'clientCredentials', clientId: 'g', clientSecret: 's' } },
    },
  });
  assert.ok(
    stdio.some((p) => /notes\.credentials: type clientCredentials .* hand the child its secret in env:/.test(p)),
    stdio.join('\n'),
  );
  const rest = configProblems({
    servers: {
      billing: {
        openapi: './billing.yaml',
        baseUrl: 'https://billing.example.com',
        credentials: { type: 'clientCredentials', clientId: 'g', clientSecret: 's' },
      },
    },
  });
  assert.ok(
    rest.some((p) => p.startsWith('servers.billing.credentials.tokenEndpoint: a REST API sends no 401')),
    rest.join('\n'),
  );
});
