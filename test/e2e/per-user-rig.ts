// The gateway every "per-user only" host test meets (issue 46): callers known by API keys, one server, crm (the
// identity fixture behind oidc-provider), reached with each person's own OAuth token, a file credential store in
// `dir`; oidc-provider and one Chromium from the OAuth rig.
import path from 'node:path';
import { silentLog } from '../../infra/log.js';
import { type IdentityServer, startIdentityServer } from '../fixtures/identity-server.js';
import { scaled } from '../timing.js';
import { type OAuthRig, startOAuthRig } from './oauth-rig.js';

export interface PerUserRigOptions {
  /** The Chromium to launch (a `chromium()` need's path, checked by the caller). */
  browserPath: string;
  /** The gateway's client at oidc-provider. */
  client: { client_id: string; client_secret: string };
  /** Each caller's API key, by principal. */
  keys: Record<string, string>;
  /** Where the credential store's file goes. */
  dir: string;
}

export function startPerUserRig(options: PerUserRigOptions): Promise<OAuthRig<IdentityServer>> {
  const { client } = options;
  return startOAuthRig({
    browserPath: options.browserPath,
    client,
    upstream: startIdentityServer,
    config: (at) => ({
      auth: { apiKeys: Object.entries(options.keys).map(([principal, key]) => ({ key, principal })) },
      // The first call after connecting reads the caller's lists as them (crm checks their new token): under CI
      // load that took over the 5 s default once, and these tests are about routing, not that deadline.
      aggregate: { listDeadlineMs: scaled(15_000) },
      credentials: {
        key: 'a-test-credentials-key-of-32-bytes-or-more',
        store: 'file',
        file: path.join(options.dir, 'credentials.json'),
      },
      servers: {
        crm: {
          url: at.upstream.url,
          credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
        },
      },
    }),
    log: silentLog,
    server: 'crm',
  });
}
