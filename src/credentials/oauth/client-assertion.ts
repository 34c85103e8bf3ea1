// The client assertion of private_key_jwt (RFC 7523 §2.2 and §3): a short-lived JWT the client signs with its own
// key instead of sending a secret. iss and sub are the client_id; aud is the authorization server's issuer (what
// the MCP conformance suite and RFC 7523bis ask for: the token endpoint's URL has been used to trick clients into
// signing for another server); a fresh jti each time, so a server that remembers them refuses a replayed one.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from '../../../infra/signing-key.js';

/** An assertion is good for this long: long enough for one token request, useless soon after. */
const LIFETIME_S = 60;

export function clientAssertion(clientId: string, audience: string, signer: SigningKey): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: signer.algorithm, typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_S}s`)
    .setJti(randomUUID())
    .sign(signer.key);
}
