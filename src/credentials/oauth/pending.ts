// What a connect link's flow keeps between its steps, sealed in the credential store: the link's first step
// (who and where), then the authorization request until its callback.
import type { TokenClient } from '../token-endpoint.js';

/** What a connect link's first step keeps: who and where. */
export interface ConnectPending {
  step: 'connect';
  principal: string;
  server: string;
  /**
   * A step-up's scopes (what was asked for before, and what the server's 403 asked for); absent: the spec's selection.
   */
  scopes?: string[];
}

/** What the authorization request keeps until the callback: everything to finish it, sealed in the store. */
export interface AuthorizationPending {
  step: 'authorize';
  principal: string;
  server: string;
  verifier: string;
  issuer: string;
  issParameterSupported: boolean;
  tokenEndpoint: string;
  resource: string;
  client: TokenClient;
  redirectUri: string;
  /** The scopes asked for (kept with the token, so a later step-up can tell what was asked already). */
  scopes?: string[];
  /** The hash of the browser binding of whoever confirmed the link (pages/browser-binding.ts). */
  binding?: string;
}
