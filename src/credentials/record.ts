// What the credential store keeps for one (principal, server): a tagged record, so that the store and its
// connect links serve every kind of per-user credential the gateway holds — OAuth tokens for a remote
// server now, a pasted secret for a per-caller child later (issue 34) — with one encryption, one place
// and one way to list and revoke them.

/** An upstream's OAuth tokens for one caller (type: oauth). */
export interface OAuthRecord {
  kind: 'oauth';
  accessToken: string;
  refreshToken?: string;
  /** Epoch ms; absent when the authorization server did not say. */
  expiresAt?: number;
  /** Epoch ms the access token was issued (connect or refresh): with expiresAt, its lifetime. */
  issuedAt?: number;
  scope?: string;
  /** The scopes the gateway asked for when this token was authorized: a step-up asks for these and more. */
  requestedScope?: string;
  /** The resource (RFC 8707) the token was issued for: it is sent nowhere else. */
  resource: string;
  /** The authorization server that issued it (its `issuer`), and the client it was issued to. */
  issuer: string;
  clientId: string;
  /** Where it is refreshed, and as which client (a pre-registered client's secret is kept sealed with it). */
  tokenEndpoint?: string;
  clientSecret?: string | undefined;
  authMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** Epoch ms the caller connected (kept through refreshes). */
  connectedAt: number;
}

/** Values a person pasted on the gateway's page for one server (e.g. an API token for a child's environment). */
export interface SecretRecord {
  kind: 'secret';
  values: Record<string, string>;
  connectedAt: number;
}

export type CredentialRecord = OAuthRecord | SecretRecord;

/** A record as its owner may see it in their list of connections: never the secret itself. */
export interface ConnectionSummary {
  server: string;
  kind: CredentialRecord['kind'];
  connectedAt: string;
  expiresAt?: string;
  scope?: string;
}

export function summarize(server: string, record: CredentialRecord): ConnectionSummary {
  const summary: ConnectionSummary = {
    server,
    kind: record.kind,
    connectedAt: new Date(record.connectedAt).toISOString(),
  };
  if (record.kind === 'oauth') {
    if (record.expiresAt !== undefined) summary.expiresAt = new Date(record.expiresAt).toISOString();
    if (record.scope !== undefined) summary.scope = record.scope;
  }
  return summary;
}

/** A parsed record, or undefined when the JSON is not one (written by a later version, or damaged). */
export function parseRecord(json: string): CredentialRecord | undefined {
  try {
    const value = JSON.parse(json) as Partial<CredentialRecord> | null;
    if (value?.kind === 'oauth' && typeof value.accessToken === 'string' && typeof value.resource === 'string')
      return value as OAuthRecord;
    if (value?.kind === 'secret' && value.values !== null && typeof value.values === 'object')
      return value as SecretRecord;
  } catch {}
  return undefined;
}

/**
 * What a paste link keeps until the page is submitted: who, where, and what to ask for. The store seals it
 * as a pending link (store.putPending); the per-caller layer writes it and the paste page reads it.
 */
export interface SecretPending {
  step: 'secret';
  principal: string;
  server: string;
}
