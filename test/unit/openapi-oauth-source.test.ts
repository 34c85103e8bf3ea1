// The credential source an openapi: server with type oauth gets (src/gateway/upstream-credentials.ts): an OAuth
// client whose tokens are for the API's baseUrl, or the credentials.resource given (RFC 8707), which the connect
// pages know by the server's name; a reload that makes it another kind of server forgets it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import { UpstreamCredentials } from '../../src/gateway/upstream-credentials.js';
import { silentLog } from '../../infra/log.js';
import { BASE } from '../config-problems.js';
import { tempDir } from '../temp.js';

const OAUTH = { type: 'oauth', issuer: 'https://login.example.com', clientId: 'gw', clientSecret: 's' };

function configWith(billing: Record<string, unknown>) {
  return parseConfig(
    {
      listen: { publicUrl: 'https://gw.example.com' },
      credentials: { key: 'k'.repeat(32), file: path.join(tempDir('openapi-oauth-source-'), 'credentials.json') },
      servers: { billing: { openapi: './billing.yaml', ...billing } },
    },
    'test.yaml',
    BASE,
    {},
  );
}

test("the tokens are for the API's baseUrl, or the resource given; the connect pages know the server", async () => {
  const config = configWith({ baseUrl: 'https://billing.example.com/v2', credentials: OAUTH });
  const credentials = await UpstreamCredentials.open(config, silentLog);
  try {
    const source = credentials.sourceFor('billing', config.servers.billing!);
    assert.ok(source instanceof OAuthClient);
    assert.equal(source.options.url, 'https://billing.example.com/v2');
    assert.ok(credentials.needsConnect('billing'));
    const named = configWith({ credentials: { ...OAUTH, resource: 'https://billing.example.com' } });
    const other = credentials.sourceFor('billing', named.servers.billing!);
    assert.ok(other instanceof OAuthClient);
    assert.equal(other.options.url, 'https://billing.example.com');
    const plain = configWith({ baseUrl: 'https://billing.example.com/v2' });
    assert.equal(credentials.sourceFor('billing', plain.servers.billing!), undefined);
    assert.ok(!credentials.needsConnect('billing'), 'a reload without credentials: no connect link any more');
  } finally {
    await credentials.close();
  }
});
