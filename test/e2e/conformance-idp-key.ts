// The conformance suite's cross-app-access scenario hands its client a person's ID token, signed (ES256) by the
// scenario's IdP, but not that IdP's key: its metadata names a jwks_uri it does not serve. The gateway takes the
// person's ID token as their JWT (auth.jwt) and verifies it as any caller's, so it needs a key: an ECDSA signature
// admits exactly two public keys (SEC 1 §4.1.6, public key recovery), the IdP's and one other, and either verifies
// that signature. One is recovered here from the token itself and given to auth.jwt as a JWKS: it verifies this
// token (its issuer, audience and expiry checked as usual), and no token it was not recovered from. Test use only.
import { createHash } from 'node:crypto';

// P-256 (SEC 2 §2.4.2).
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const A = P - 3n;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
const G: Point = {
  x: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  y: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
};

interface Point {
  x: bigint;
  y: bigint;
}

const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;

function power(base: bigint, exponent: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
  }
  return result;
}

const inverse = (a: bigint, m: bigint) => power(a, m - 2n, m); // m is prime

function add(p: Point | undefined, q: Point | undefined): Point | undefined {
  if (!p) return q;
  if (!q) return p;
  if (p.x === q.x && mod(p.y + q.y, P) === 0n) return undefined;
  const slope =
    p.x === q.x ? mod((3n * p.x * p.x + A) * inverse(2n * p.y, P), P) : mod((q.y - p.y) * inverse(q.x - p.x, P), P);
  const x = mod(slope * slope - p.x - q.x, P);
  return { x, y: mod(slope * (p.x - x) - p.y, P) };
}

function multiply(k: bigint, point: Point): Point | undefined {
  let result: Point | undefined;
  let addend: Point | undefined = point;
  for (let e = mod(k, N); e > 0n; e >>= 1n) {
    if (e & 1n) result = add(result, addend);
    addend = add(addend, addend);
  }
  return result;
}

const toBigInt = (bytes: Buffer) => BigInt(`0x${bytes.toString('hex') || '0'}`);
const coordinate = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').toString('base64url');

/** A JWKS with one P-256 key that verifies the ES256 signature of `jwt`. */
export function verifyingKeySet(jwt: string): { keys: Record<string, string>[] } {
  const [header, payload, signature] = jwt.split('.');
  const sig = Buffer.from(signature!, 'base64url');
  const r = toBigInt(sig.subarray(0, 32));
  const s = toBigInt(sig.subarray(32));
  const z = toBigInt(createHash('sha256').update(`${header}.${payload}`).digest());
  // R's x is r (r + n exceeds p on P-256 for all but a negligible share of signatures); its y is either root.
  const y = power(mod(r * r * r + A * r + B, P), (P + 1n) / 4n, P);
  const rInverse = inverse(r, N);
  const q = add(multiply(mod(s * rInverse, N), { x: r, y }), multiply(mod(-z * rInverse, N), G))!;
  return { keys: [{ kty: 'EC', crv: 'P-256', x: coordinate(q.x), y: coordinate(q.y), alg: 'ES256', use: 'sig' }] };
}
