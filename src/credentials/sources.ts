// Which credential source serves a server configured with `credentials:`: token exchange now; the
// OAuth client (per caller, through connect links and the store) where it is configured.
import type { ServerConfig } from '../config/config.js';
import type { CredentialSource } from './credentialed-upstream.js';
import { TokenExchanger } from './token-exchange.js';

export function credentialSourceFor(name: string, server: ServerConfig): CredentialSource | undefined {
  if (server.transport !== 'http' || !server.credentials) return undefined;
  if (server.credentials.type === 'tokenExchange') return new TokenExchanger(name, server.credentials, server.url);
  return undefined;
}
