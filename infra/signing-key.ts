// The private key of an OAuth client that authenticates with a signed assertion (private_key_jwt, RFC 7523 §2.2): read
// once, at load, with the JWS algorithm its type implies. Node's own parser, so any PEM form an operator has
// (PKCS#8, or the older "RSA PRIVATE KEY" / "EC PRIVATE KEY") is taken; and no jose here, so that the config can
// check a key without loading the credentials' modules.
import { createPrivateKey, type KeyObject } from 'node:crypto';

/** The algorithms each key type may sign with (RFC 7518; EdDSA RFC 8037). */
const ALGORITHMS: Record<string, string[]> = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:prime256v1': ['ES256'],
  'ec:secp384r1': ['ES384'],
  'ec:secp521r1': ['ES512'],
  ed25519: ['EdDSA'],
  ed448: ['EdDSA'],
};

export interface SigningKey {
  key: KeyObject;
  algorithm: string;
}

/** What is wrong, and with which of the two settings: the key's text, or the algorithm asked of it. */
export interface KeyProblem {
  wrong: 'privateKey' | 'algorithm';
  problem: string;
}

/**
 * The key in `pem` and the algorithm to sign with (`algorithm`, or the first its type allows); what is wrong when the
 * text is no private key or the algorithm does not fit it.
 */
export function signingKey(pem: string, algorithm?: string): SigningKey | KeyProblem {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    // The parser's own message may quote the key's text: none of it is repeated.
    return { wrong: 'privateKey', problem: 'is not a PEM private key (-----BEGIN PRIVATE KEY----- …)' };
  }
  const type = key.asymmetricKeyType ?? 'unknown';
  const allowed = ALGORITHMS[type === 'ec' ? `ec:${key.asymmetricKeyDetails?.namedCurve}` : type];
  if (!allowed)
    return {
      wrong: 'privateKey',
      problem:
        `is a ${type} key, which the gateway cannot sign an assertion with ` + '(use RSA, EC P-256/384/521 or Ed25519)',
    };
  if (algorithm === undefined) return { key, algorithm: allowed[0]! };
  if (!allowed.includes(algorithm))
    return {
      wrong: 'algorithm',
      problem: `is a ${type} key, which cannot sign ${algorithm}: use ${allowed.join(', ')}`,
    };
  return { key, algorithm };
}
