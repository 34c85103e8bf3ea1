// Credentials by their published formats: private keys (PEM), AWS access key ids and secret keys written
// beside their name, GitHub, Slack, Stripe and Google API keys, JSON Web Tokens (one expression of alternatives,
// each anchored at a token start and bounded, so a scan stays linear: detectors.ts), and the password of a URL's
// userinfo (an expression of its own, below).

/**
 * What RFC 3986 allows in a URL's userinfo (unreserved, pct-encoded, sub-delims), ':' and '-' aside: each class
 * adds '-' last, where it cannot form a range.
 */
const USERINFO = "A-Za-z0-9._~%!$&'()*+,;=";

/**
 * The password of a URL's userinfo (`postgres://app:s3cret@db…`, `https://user:pass@host/`, `redis://:pw@host`).
 * Only the password is matched, so a redaction leaves the URL readable: `postgres://app:[redacted:secrets]@db…`.
 * The lookbehind is matched backwards from the ':' (so at any other character it fails at its first step), then
 * a user of at most 64 userinfo characters (no ':', so only the first ':' after "//" starts a password), "//" and
 * a scheme. The password is at most 128 userinfo characters (':' allowed) right before an '@' and a host (a name
 * or an IPv6 '['): `http://host:8080/x` has a '/' before any '@', `ssh://git@github.com` no ':' before its '@',
 * and an IPv6 literal's ':'s follow a '[' or a ':', never "//" and a user. A mask of asterisks is no password.
 * Not one more alternative of SECRET_PATTERNS: there it made that expression's scan of 1 MiB 10 times slower (2-6 ms
 * to 40-50; a match that may start at any userinfo character most likely took from V8 the first-character check it
 * skips positions by); alone, and only over text holding "://" (detectors.ts), it costs about 4 ms per MiB of such
 * text.
 */
export const URL_PASSWORD = new RegExp(
  `(?<=[A-Za-z][A-Za-z0-9+.-]{0,31}://[${USERINFO}-]{0,64}:)` +
    String.raw`(?!\*{1,128}@)` +
    `[${USERINFO}:-]{1,128}` +
    String.raw`(?=@[A-Za-z0-9\[])`,
  'g',
);

const PATTERNS: readonly string[] = [
  // A PEM private key of any kind (RSA, EC, OPENSSH, ENCRYPTED, plain PKCS#8), its body (headers such as
  // Proc-Type have single dashes) and its END line.
  String.raw`-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY-----(?:[A-Za-z0-9+/=\s:,]|-(?!-)){0,16384}` +
    '(?:-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY-----)?',
  // AWS access key ids (long-term AKIA, temporary ASIA, and the rarer prefixes).
  '(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])',
  // An AWS secret access key written after its name (alone it is 40 characters of base64, as a SHA-1 is hex).
  String.raw`(?<![A-Za-z0-9_])aws_?secret_?access_?key["']?\s{0,4}[:=]\s{0,4}["']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])`,
  // GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained personal access tokens.
  '(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])',
  '(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_])',
  // Slack tokens and incoming webhooks.
  '(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,250}',
  String.raw`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_]{20,200}`,
  // Stripe secret and restricted keys (publishable pk_ keys are public by design).
  '(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9_])',
  // Google API keys.
  '(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])',
  // A JSON Web Token: a JSON header and payload (both begin `{"`: eyJ in base64url) and a signature.
  String.raw`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,16384}\.[A-Za-z0-9_-]{10,2048}`,
];

export const SECRET_PATTERNS = new RegExp(PATTERNS.join('|'), 'g');
