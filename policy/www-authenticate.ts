// `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3, with RFC 9728 §5.1's resource_metadata), so a client
// learns where to get a token and which scopes to ask for.

export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface BearerChallenge {
  /** Absent when the request carried no credentials at all (RFC 6750 §3.1: then no error code). */
  error?: BearerError | undefined;
  errorDescription?: string | undefined;
  /** URL of this resource's Protected Resource Metadata document. */
  resourceMetadata?: string | undefined;
  /** Scopes a token needs; omitted when empty. */
  scope?: readonly string[] | undefined;
}

export function bearerChallenge(challenge: BearerChallenge): string {
  const params: string[] = [];
  if (challenge.error !== undefined) params.push(`error="${challenge.error}"`);
  if (challenge.error !== undefined && challenge.errorDescription) {
    params.push(`error_description=${quotedString(restrictToRfc6750(challenge.errorDescription))}`);
  }
  if (challenge.resourceMetadata) params.push(`resource_metadata=${quotedString(challenge.resourceMetadata)}`);
  const scope = (challenge.scope ?? []).map(restrictToRfc6750).filter((token) => token !== '' && !token.includes(' '));
  if (scope.length > 0) params.push(`scope=${quotedString(scope.join(' '))}`);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters (to drop them) is the point
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/g;

/**
 * An RFC 9110 quoted-string: `"` and `\` become quoted-pairs; control characters are dropped and non-ASCII
 * replaced, since a header value must stay one line of Latin-1 (Node refuses anything else).
 */
export function quotedString(value: string): string {
  return `"${value
    .replace(CONTROL_CHARACTERS, '')
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/["\\]/g, '\\$&')}"`;
}

// RFC 6750 §3 allows only %x20-21 / %x23-5B / %x5D-7E in error_description and scope: no quote, no backslash,
// so not even a quoted-pair. Swap those for look-alikes instead of losing the words around them.
function restrictToRfc6750(value: string): string {
  return value
    .replace(CONTROL_CHARACTERS, '')
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x7e]/g, '?');
}
