// What an operator must know at start about per-user credentials (issue 46 items 6 and 7): the redirect
// URIs to register at authorization servers and where connections are stored, in one log line; and a
// warning when the gateway is set up for replicas (cache.store: redis) but keeps credentials in a file,
// which each replica has its own of.
import type { GatewayConfig } from '../config/index.js';
import type { Log } from '../../infra/log.js';
import { redirectUris } from '../credentials/index.js';

export function announceCredentials(config: GatewayConfig, log: Log): void {
  const settings = config.credentials;
  const publicUrl = config.listen.publicUrl;
  if (!settings) return;
  const servers = Object.entries(config.servers);
  const oauth = servers.filter(([, server]) => 'credentials' in server && server.credentials?.type === 'oauth');
  const pasted = servers.filter(([, server]) => 'secrets' in server && server.secrets !== undefined);
  if (oauth.length === 0 && pasted.length === 0) return;
  const store =
    settings.store === 'redis'
      ? { store: 'redis', keyPrefix: config.cache.keyPrefix }
      : { store: 'file', file: settings.file };
  const uris = publicUrl === undefined ? undefined : redirectUris(publicUrl);
  const fields: Record<string, unknown> = { ...store };
  if (uris && oauth.length) {
    fields.redirectUris = config.auth?.jwt ? [uris.connect, uris.signIn] : [uris.connect];
    fields.oauthServers = oauth.map(([name]) => name);
  }
  if (publicUrl && pasted.length) {
    fields.pastePages = `${publicUrl}/secrets/…`;
    fields.secretServers = pasted.map(([name]) => name);
  }
  const register = fields.redirectUris as string[] | undefined;
  log.info(
    fields,
    `per-user credentials are kept in the ${settings.store} store` +
      (register
        ? `; register ${register.join(' and ')} as redirect URI${register.length > 1 ? 's' : ''} of each client ` +
          'you pre-register at an authorization server (clientId)'
        : ''),
  );
  if (config.cache.store === 'redis' && settings.store === 'file') {
    log.warn(
      { cacheStore: 'redis', credentialsStore: 'file', file: settings.file },
      'cache.store is redis, so this gateway is set up for replicas, but credentials.store is file: each replica ' +
        'keeps its own links and connections, so a link made on one and opened on another is refused as "used ' +
        'already, expired, or never issued", and an account or secret connected on one is unknown to the others. ' +
        'Set credentials.store: redis (it shares cache.url), or run one replica',
    );
  }
}
