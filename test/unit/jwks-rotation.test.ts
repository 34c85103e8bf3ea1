// JWKS key rotation against a real JWKS endpoint on 127.0.0.1, tokens signed by jose. The issuer rotates to
// a new key: a token naming it is accepted once 30 s have passed since the last fetch (the gateway refetches
// on an unknown `kid`), and a flood of tokens naming keys that do not exist costs the issuer at most one
// fetch per 30 s. A key the issuer dropped stops being accepted within 10 minutes. The clock is node:test's
// mocked Date (jose reads Date.now for its cooldown and token times); the HTTP is real.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, mock, test } from 'node:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { silentLog } from '../../infra/log.js';
import { JwtVerifier } from '../../policy/jwt.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'https://gateway.test';
/** The documented bounds (policy/jwt.ts, docs/security.md), written down rather than read from the code. */
const COOLDOWN_MS = 30_000;
const MAX_AGE_MS = 600_000;

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

function token(key: SigningKey, subject: string, kid = key.kid): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(key.privateKey);
}

describe('JWKS key rotation (a real JWKS endpoint on loopback)', () => {
  let server: Server;
  let served: JWK[] = [];
  let fetches = 0;
  let jwksUrl: string;

  before(async () => {
    server = createServer((_request, response) => {
      fetches++;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: served }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test(
    'a rotated-in key is fetched on its first token after the cooldown; unknown kids cost one fetch per 30 s; a ' +
      'dropped key ends',
    async (t) => {
      t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
      t.after(() => mock.timers.reset());
      const old = await signingKey('old');
      const rotated = await signingKey('rotated');
      served = [old.jwk];
      fetches = 0;
      const verifier = await JwtVerifier.create(
        {
          issuer: ISSUER,
          audience: [AUDIENCE],
          jwksUrl,
          algorithms: ['ES256'],
          principalClaim: 'sub',
          groupsClaim: 'groups',
          clockToleranceSec: 0,
        },
        silentLog,
      );
      const principalOf = async (jwt: string) => {
        const verdict = await verifier.verify(jwt);
        return verdict.ok ? verdict.principal.id : verdict.reason;
      };

      assert.equal(await principalOf(await token(old, 'alice')), 'alice', 'the control: the current key');
      assert.equal(fetches, 1, 'fetched once, on first use');

      // The issuer rotates: the new key is published and used at once.
      served = [old.jwk, rotated.jwk];
      const withRotated = await token(rotated, 'bob');
      assert.match(
        await principalOf(withRotated),
        /no signing key matches/,
        'within 30 s of the last fetch the new kid is not looked up',
      );
      assert.equal(fetches, 1);
      t.mock.timers.tick(COOLDOWN_MS);
      assert.equal(
        await principalOf(withRotated),
        'bob',
        'after the cooldown the unknown kid makes the gateway refetch',
      );
      assert.equal(fetches, 2);
      assert.equal(await principalOf(await token(old, 'alice')), 'alice', 'the old key, still published, still works');
      assert.equal(fetches, 2, 'known keys cost no fetch');

      // An attacker sends tokens naming kids that do not exist (signed by a key the issuer never had).
      const stranger = await signingKey('stranger');
      const flood = async (count: number) => {
        for (let i = 0; i < count; i++)
          assert.match(await principalOf(await token(stranger, 'mallory', `made-up-${i}`)), /no signing key matches/);
      };
      await flood(50);
      assert.equal(fetches, 2, '50 unknown kids within the cooldown: no fetch');
      t.mock.timers.tick(COOLDOWN_MS - 1);
      await flood(20);
      assert.equal(fetches, 2, 'still none 1 ms before the cooldown ends');
      t.mock.timers.tick(1);
      await flood(50);
      assert.equal(fetches, 3, 'one fetch once the cooldown has passed, however many tokens follow');

      // The issuer drops the old key (compromised): the gateway stops accepting it once its copy is 10 min old.
      served = [rotated.jwk];
      const withOld = await token(old, 'alice');
      assert.equal(await principalOf(withOld), 'alice', 'the cached copy still holds it');
      t.mock.timers.tick(MAX_AGE_MS);
      assert.match(await principalOf(withOld), /no signing key matches/, 'refused after at most 10 minutes');
      assert.equal(fetches, 4);
      assert.equal(await principalOf(await token(rotated, 'bob')), 'bob');
    },
  );
});
