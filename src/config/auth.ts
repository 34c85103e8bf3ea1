// The auth: section: how callers prove who they are (API keys by hash, JWTs verified against keys the gateway
// holds, anonymous) and the resource server's own OAuth metadata. Its own file, as the sandbox and credential
// sections have theirs: config.ts assembles the sections.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { operators } from './security.js';
import { bool, int } from './values.js';

const apiKey = z
  .strictObject({
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'give the key\'s SHA-256 as 64 hex digits (printf %s "$KEY" | sha256sum)')
      .optional(),
    key: z
      .string()
      .min(16, 'an API key must be at least 16 characters; generate one with openssl rand -base64 32')
      .optional(),
    principal: z.string().min(1),
    groups: z.array(z.string().min(1)).default([]),
  })
  .refine(
    (k) => (k.sha256 === undefined) !== (k.key === undefined),
    'give exactly one of sha256 (preferred: the key\'s hash) or key (e.g. "${MY_KEY}")',
  )
  .transform((k) => ({
    sha256: k.sha256?.toLowerCase() ?? createHash('sha256').update(k.key!).digest('hex'),
    principal: k.principal,
    groups: k.groups,
  }));

const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
const jwt = z
  .strictObject({
    issuer: z.string().min(1),
    /** Accepted audiences; defaults to auth.oauth.resource. */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
    jwksFile: z.string().min(1).optional(),
    publicKeyFile: z.string().min(1).optional(),
    algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1).default(['RS256', 'ES256']),
    principalClaim: z.string().min(1).default('sub'),
    groupsClaim: z.string().min(1).default('groups'),
    clockToleranceSec: int().pipe(z.number().min(0)).default(30),
  })
  .refine(
    (j) => [j.jwksUrl, j.jwksFile, j.publicKeyFile].filter((v) => v !== undefined).length === 1,
    'give exactly one of jwksUrl, jwksFile or publicKeyFile: where the keys that sign tokens come from',
  );

export const auth = z.strictObject({
  /** Serve callers without credentials (as the principal "anonymous"). */
  anonymous: bool().default(false),
  apiKeys: z.array(apiKey).default([]),
  jwt: jwt.optional(),
  operators,
  /** OAuth 2.1 resource server settings (RFC 9728 metadata, audience, required scopes). */
  oauth: z
    .strictObject({
      resource: z.url({ protocol: /^https?$/ }).optional(),
      authorizationServers: z.array(z.url({ protocol: /^https?$/ })).default([]),
      scopes: z
        .array(
          z
            .string()
            .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope is printable ASCII without spaces, quotes or backslashes'),
        )
        .default([]),
    })
    .prefault({}),
});
