// The upstream-identity keys (issue 33): listen.publicUrl, credentials:, and servers.<name>.credentials,
// with the load errors that name what to add or change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseConfig, type HttpServerConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const KEY = 'k'.repeat(32);
const JWT = {
  issuer: 'https://idp.example.com',
  jwksUrl: 'https://idp.example.com/jwks',
  audience: 'https://gw.example.com/mcp',
};
const EXCHANGE = {
  type: 'tokenExchange',
  tokenEndpoint: 'https://idp.example.com/token',
  clientId: 'gw',
  clientSecret: 'secret',
  audience: 'https://docs.example.com/mcp',
};

test("the issue's example loads: publicUrl trimmed, the store file resolved, both kinds of server credentials", () => {
  const config = parseConfig(
    {
      listen: { publicUrl: 'https://gw.example.com/' },
      credentials: { key: KEY, store: 'file', file: './credentials.json' },
      auth: { jwt: JWT },
      servers: {
        crm: {
          url: 'https://crm.example.com/mcp',
          credentials: { type: 'oauth', clientId: 'gw', clientSecret: 's', scopes: ['crm.read'] },
        },
        docs: { url: 'https://docs.example.com/mcp', credentials: EXCHANGE },
      },
    },
    'test.yaml',
    BASE,
    {},
  );
  assert.equal(config.listen.publicUrl, 'https://gw.example.com');
  assert.equal(config.credentials?.file, path.join(BASE, 'credentials.json'));
  assert.equal(config.credentials?.linkTtlMs, 600_000);
  const docs = config.servers.docs as HttpServerConfig;
  assert.equal(docs.credentials?.type, 'tokenExchange');
  assert.equal(docs.credentials?.type === 'tokenExchange' && docs.credentials.authMethod, 'client_secret_basic');
  const crm = config.servers.crm as HttpServerConfig;
  assert.deepEqual(crm.credentials?.type === 'oauth' && crm.credentials.scopes, ['crm.read']);
});

test('a key shorter than 32 bytes is refused, saying how to make one', () => {
  const found = configProblems({ credentials: { key: 'short-key' }, servers: { a: { command: 'node' } } });
  assert.ok(
    found.some((p) => p.includes('credentials.key') && p.includes('32 bytes') && p.includes('openssl rand')),
    found.join('\n'),
  );
});

test('tokenExchange without auth.jwt is refused at load, naming auth.jwt', () => {
  const found = configProblems({
    auth: { anonymous: true },
    servers: { docs: { url: 'https://docs.example.com/mcp', credentials: EXCHANGE } },
  });
  assert.ok(
    found.some((p) => p.startsWith('servers.docs.credentials') && p.includes('auth.jwt')),
    found.join('\n'),
  );
  // The control: with auth.jwt the same server loads.
  parseConfig(
    { auth: { jwt: JWT }, servers: { docs: { url: 'https://docs.example.com/mcp', credentials: EXCHANGE } } },
    'test.yaml',
    BASE,
    {},
  );
});

test('type oauth needs the store and publicUrl; each missing one is named', () => {
  const found = configProblems({
    servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
  });
  assert.ok(
    found.some((p) => p.includes('servers.crm.credentials') && p.includes('credentials: { key:')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.includes('servers.crm.credentials') && p.includes('listen.publicUrl')),
    found.join('\n'),
  );
  parseConfig(
    {
      listen: { publicUrl: 'http://127.0.0.1:8080' },
      credentials: { key: KEY },
      servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
    },
    'test.yaml',
    BASE,
    {},
  );
});

test('a static Authorization header beside per-user credentials is refused', () => {
  const found = configProblems({
    auth: { jwt: JWT },
    servers: {
      docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer x' }, credentials: EXCHANGE },
    },
  });
  assert.ok(
    found.some((p) => p.includes('remove servers.docs.headers.Authorization')),
    found.join('\n'),
  );
});

test('an unknown credentials type and a link that lives too long are refused', () => {
  const found = configProblems({
    listen: { publicUrl: 'https://gw.example.com' },
    credentials: { key: KEY, linkTtlMs: 3_600_000 },
    auth: { jwt: JWT },
    servers: {
      a: { url: 'https://a.example.com/mcp', credentials: { type: 'apiKey' } },
      b: { url: 'https://b.example.com/mcp', credentials: { ...EXCHANGE, clientSecret: undefined } },
    },
  });
  assert.ok(
    found.some((p) => p.startsWith('servers.a.credentials') && p.includes('"oauth"') && p.includes('"tokenExchange"')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.startsWith('credentials.linkTtlMs') && p.includes('10 minutes')),
    found.join('\n'),
  );
});

test('a secret method without a secret is refused, naming authMethod: none', () => {
  const found = configProblems({
    auth: { jwt: JWT },
    servers: { b: { url: 'https://b.example.com/mcp', credentials: { ...EXCHANGE, clientSecret: undefined } } },
  });
  assert.ok(
    found.some((p) => p.startsWith('servers.b.credentials.clientSecret') && p.includes('authMethod: none')),
    found.join('\n'),
  );
});

test(
  'an authorization server endpoint in clear text (tokenExchange tokenEndpoint, oauth issuer) is refused at ' +
    'load; https and loopback http load',
  () => {
    const exchange = (tokenEndpoint: string) => ({
      auth: { jwt: JWT },
      servers: { docs: { url: 'https://docs.example.com/mcp', credentials: { ...EXCHANGE, tokenEndpoint } } },
    });
    const found = configProblems(exchange('http://idp.example.com/token'));
    assert.ok(
      found.some(
        (p) =>
          p.startsWith('servers.docs.credentials.tokenEndpoint') &&
          p.includes('must use https') &&
          p.includes('loopback'),
      ),
      found.join('\n'),
    );
    const oauth = (issuer: string) => ({
      listen: { publicUrl: 'https://gw.example.com' },
      credentials: { key: KEY, store: 'file', file: './c.json' },
      servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth', issuer } } },
    });
    const issuerProblems = configProblems(oauth('http://idp.example.com'));
    assert.ok(
      issuerProblems.some((p) => p.startsWith('servers.crm.credentials.issuer') && p.includes('must use https')),
      issuerProblems.join('\n'),
    );
    for (const fine of ['https://idp.example.com/token', 'http://127.0.0.1:9/token', 'http://localhost:9/token'])
      parseConfig(exchange(fine), 'test.yaml', BASE, {});
    parseConfig(oauth('http://[::1]:9'), 'test.yaml', BASE, {});
  },
);

test(
  'type oauth with a publicUrl in clear text is refused at load: the redirect URI an authorization code comes ' +
    'back to must be https or localhost',
  () => {
    const withPublicUrl = (url: string) => ({
      listen: { publicUrl: url },
      credentials: { key: KEY, store: 'file', file: './c.json' },
      servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
    });
    const found = configProblems(withPublicUrl('http://gw.example.com'));
    assert.ok(
      found.some(
        (p) =>
          p.startsWith('listen.publicUrl') &&
          p.includes('http://gw.example.com/connect/callback') &&
          p.includes('https://'),
      ),
      found.join('\n'),
    );
    for (const fine of ['https://gw.example.com', 'http://127.0.0.1:8080', 'http://localhost:8080'])
      parseConfig(withPublicUrl(fine), 'test.yaml', BASE, {});
    // Without a server that has codes sent back, a plain http publicUrl (paste pages on a trusted network) still loads.
    parseConfig(
      { listen: { publicUrl: 'http://gw.example.com' }, servers: { a: { command: 'node' } } },
      'test.yaml',
      BASE,
      {},
    );
  },
);

test(
  'listen.publicUrl is kept as URL writes it (scheme and host in lower case, no trailing slash); a path, a ' +
    '?query or a #fragment is refused naming why',
  () => {
    const withPublicUrl = (url: string) => ({
      listen: { publicUrl: url },
      credentials: { key: KEY, store: 'file', file: './c.json' },
      servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth' } } },
    });
    assert.equal(
      parseConfig(withPublicUrl('HTTPS://GW.Example.COM/'), 'test.yaml', BASE, {}).listen.publicUrl,
      'https://gw.example.com',
    );
    for (const withPath of ['https://example.com/gateway/', 'https://example.com/gateway']) {
      const found = configProblems(withPublicUrl(withPath));
      assert.ok(
        found.some((p) => p.startsWith('listen.publicUrl') && p.includes('live at the root of the gateway')),
        `${withPath}: ${found.join('\n')}`,
      );
    }
    for (const bad of ['https://gw.example.com/?x=1', 'https://gw.example.com/#frag']) {
      const found = configProblems(withPublicUrl(bad));
      assert.ok(
        found.some((p) => p.startsWith('listen.publicUrl') && p.includes('without a ?query or #fragment')),
        `${bad}: ${found.join('\n')}`,
      );
    }
  },
);

test('a value that is no URL is told so once: not also that it is no https URL', () => {
  const found = configProblems({
    listen: { publicUrl: 'https://gw.example.com' },
    credentials: { key: KEY, store: 'file', file: './c.json' },
    servers: { crm: { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth', issuer: 'not a url' } } },
  });
  const aboutIssuer = found.filter((p) => p.startsWith('servers.crm.credentials.issuer'));
  assert.equal(aboutIssuer.length, 1, aboutIssuer.join('\n'));
  assert.match(aboutIssuer[0]!, /give the authorization server's issuer URL/);
});
