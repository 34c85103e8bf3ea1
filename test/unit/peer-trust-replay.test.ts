// A captured replica vouch (src/mrtr/peer-trust.ts), replayed by whoever saw it: on another path, after its
// expiry, with its claims edited, with its MAC respelled, or a registry entry passed off as one. Each is
// refused; the genuine vouch, on its own path and in time, opens. The path is read from a real HTTP request
// line by the same function the edge uses (forwardedCaller), so what "another path" means is the server's.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FORWARDED_HEADER, forwardedCaller } from '../../src/edge/forward.js';
import { CALLER_HEADER, PeerTrust } from '../../src/mrtr/peer-trust.js';
import type { Principal } from '../../policy/principal.js';

const SECRET = Buffer.from('peer-trust-replay-secret-0123456789abcdef');
const trust = new PeerTrust(SECRET);
const alice: Principal = { id: 'alice', groups: ['staff'], scopes: ['tools:call'], via: 'jwt' };
const BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}';
/** How long a vouch is good for, as documented in peer-trust.ts (written down here, not read from it). */
const TTL_MS = 30_000;

/** The claims of a vouch, and the vouch re-encoded from edited claims with the original MAC kept. */
function claimsOf(vouch: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(vouch.slice(0, vouch.lastIndexOf('.')), 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}
function edited(vouch: string, change: Record<string, unknown>): string {
  const claims = { ...claimsOf(vouch), ...change };
  return `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${vouch.slice(vouch.lastIndexOf('.') + 1)}`;
}

describe('a replica vouch replayed', () => {
  let server: Server;
  let port: number;

  before(async () => {
    // Answers what the edge would make of the request: the vouched-for caller, or null when refused.
    server = createServer((incoming, outgoing) => {
      const caller = forwardedCaller(incoming, trust);
      outgoing.setHeader('content-type', 'application/json');
      outgoing.end(JSON.stringify(caller === null ? null : caller === undefined ? 'not-forwarded' : caller));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends `vouch` as a forward to the raw request line `path` (no normalisation by a client library). */
  function replay(path: string, vouch: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { [FORWARDED_HEADER]: 'replica-a', [CALLER_HEADER]: vouch },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(JSON.parse(text)));
        },
      );
      req.on('error', reject);
      req.end(BODY);
    });
  }

  test('on its own path it opens, with the caller and body digest it was made for (the control)', async () => {
    const vouch = trust.vouch(alice, 'ctx-1', '/mcp', BODY);
    const opened = (await replay('/mcp', vouch)) as { principal: Principal; context: string; bodyDigest: string };
    assert.deepEqual(opened.principal, alice);
    assert.equal(opened.context, 'ctx-1');
    assert.equal(opened.bodyDigest, claimsOf(vouch).body);
    assert.deepEqual(await replay('/mcp?anything=1', vouch), opened, 'the query is not part of the path');
  });

  test('on any other path it is refused', async () => {
    const vouch = trust.vouch(alice, 'ctx-1', '/mcp', BODY);
    for (const path of [
      '/search/mcp',
      '/profile/ops/mcp',
      '/mcp/',
      '//mcp',
      '/MCP',
      '/%6Dcp',
      '/mcp/../search/mcp',
      'http://elsewhere.invalid/search/mcp',
    ]) {
      assert.equal(await replay(path, vouch), null, `replayed on ${path}`);
    }
    const forSearch = trust.vouch(alice, 'ctx-1', '/search/mcp', BODY);
    assert.equal(await replay('/mcp', forSearch), null, 'a vouch for /search/mcp replayed on /mcp');
  });

  test('after its expiry it is refused, on the edge and at the boundary', async () => {
    const stale = trust.vouch(alice, 'ctx-1', '/mcp', BODY, Date.now() - TTL_MS - 1);
    assert.equal(await replay('/mcp', stale), null, 'a vouch made more than 30 s ago');
    const made = 1_000_000;
    const vouch = trust.vouch(alice, 'ctx-1', '/mcp', BODY, made);
    assert.ok(trust.openVouch(vouch, '/mcp', made + TTL_MS - 1), 'good until the last millisecond');
    assert.equal(trust.openVouch(vouch, '/mcp', made + TTL_MS), undefined, 'refused from its expiry on');
  });

  test('edited claims, a respelled MAC, another secret, or a registry entry are refused', async () => {
    const vouch = trust.vouch(alice, 'ctx-1', '/mcp', BODY);
    const mac = vouch.slice(vouch.lastIndexOf('.') + 1);
    const body = vouch.slice(0, vouch.lastIndexOf('.'));
    const attempts: Record<string, string> = {
      'path moved to /search/mcp': edited(vouch, { path: '/search/mcp' }),
      'expiry pushed back an hour': edited(vouch, { exp: Date.now() + 3_600_000 }),
      'another principal': edited(vouch, { id: 'admin', groups: ['admins'] }),
      'padded MAC': `${vouch}=`,
      'MAC in the base64 alphabet': `${body}.${mac.replaceAll('-', '+').replaceAll('_', '/')}${
        mac.includes('-') || mac.includes('_') ? '' : '='
      }`,
      'no MAC': body,
      'signed with another secret': new PeerTrust(Buffer.from('another-deployment-secret-0123456789')).vouch(
        alice,
        'ctx-1',
        '/mcp',
        BODY,
      ),
      'a registry entry': trust.registryEntry('replica-a', '/mcp', Date.now() + 60_000),
    };
    for (const [what, forged] of Object.entries(attempts)) assert.equal(await replay('/mcp', forged), null, what);
    assert.notEqual(await replay('/mcp', vouch), null, 'the genuine one still opens');
  });

  test('a registry entry opens only for its instance and until its expiry', () => {
    const now = 5_000_000;
    const entry = trust.registryEntry('replica-a', 'http://127.0.0.1:4100', now + 10_000);
    assert.equal(trust.openRegistryEntry('replica-a', entry, now), 'http://127.0.0.1:4100', 'the control');
    assert.equal(trust.openRegistryEntry('replica-b', entry, now), undefined, 'copied under another instance');
    assert.equal(trust.openRegistryEntry('replica-a', entry, now + 10_000), undefined, 'expired');
    assert.equal(
      trust.openRegistryEntry('replica-a', trust.vouch(alice, 'c', '/mcp', BODY, now), now),
      undefined,
      'a vouch passed off as an entry',
    );
  });
});
