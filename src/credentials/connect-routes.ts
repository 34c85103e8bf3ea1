// The pages a person's browser meets while connecting an account, under listen.publicUrl:
//   GET  /connect/<link>     the link from the MCP client: single use, expiring, bound to principal and
//                            server. With sign-in (auth.jwt whose issuer has an authorization endpoint) it
//                            sends the person to sign in there first; else it shows who is connecting
//                            what, with one button
//   GET  /connect/signed-in  the issuer's redirect: the person must be the link's principal, then on to
//                            the upstream's authorization (oauth/sign-in.ts)
//   POST /connect/confirm    that button: discovery and the authorization request (PKCE, resource)
//   GET  /connect/callback   the authorization server's redirect: the code exchanged, the token stored
//   GET  /oauth/client-metadata.json   the gateway's Client ID Metadata Document (its client_id where accepted)
// and, with the caller's usual credentials: GET /connections (theirs, never the tokens), DELETE
// /connections/<server> (revoke). Nothing here ever writes a token or a code to a page or a log.
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import { clientMetadata } from './oauth/client-identity.js';
import {
  type AuthorizationPending,
  type ConnectPending,
  issuerProblem,
  type OAuthClient,
} from './oauth/oauth-client.js';
import { type GatewaySignIn, type SignedIn, type SignInPending, signInIssuerProblem } from './oauth/sign-in.js';
import type { CredentialStore } from './store.js';

type App = Hono<{ Bindings: HttpBindings }>;

export interface ConnectRouteOptions {
  store: CredentialStore;
  /** The OAuth clients by server name, as of now (a reload may change them). */
  clients(): ReadonlyMap<string, OAuthClient>;
  /** The principal of an Authorization header, or undefined when it is not accepted. */
  authenticate(authorization: string | undefined): Promise<string | undefined>;
  /** listen.publicUrl: where the gateway's Client ID Metadata Document says it lives. */
  publicUrl?: string | undefined;
  /** Signing the person in at auth.jwt's issuer before a link goes on; absent without auth.jwt. */
  signIn?: GatewaySignIn | undefined;
  log: Log;
}

export function addConnectRoutes(app: App, options: ConnectRouteOptions): void {
  const { store, log } = options;

  // The gateway's Client ID Metadata Document: its URL is its client_id at authorization servers that accept one.
  app.get('/oauth/client-metadata.json', (c) => {
    if (options.publicUrl === undefined)
      return c.json({ error: 'set listen.publicUrl to serve the client metadata document' }, 404);
    return c.json(clientMetadata(options.publicUrl), 200, { 'cache-control': 'public, max-age=3600' });
  });

  app.get('/connect/callback', async (c) => {
    const state = c.req.query('state');
    const pending = state ? await store.takePending<AuthorizationPending>(state) : undefined;
    if (pending?.step !== 'authorize')
      return page(
        c,
        400,
        'This sign-in cannot be finished',
        'It was used already, it expired, or it did not start here. Go back to your client and try the call again ' +
          'for a new link.',
      );
    // RFC 9207 first: a response from another issuer is neither acted on nor shown, its error included.
    const wrongIssuer = issuerProblem(pending, c.req.query('iss'));
    if (wrongIssuer !== undefined) {
      log.warn({ server: pending.server }, 'an authorization response from another issuer was refused (RFC 9207)');
      return page(c, 400, `Not connected to ${pending.server}`, wrongIssuer);
    }
    const client = options.clients().get(pending.server);
    const error = c.req.query('error');
    if (!client || error)
      return page(
        c,
        400,
        `Not connected to ${pending.server}`,
        error
          ? `The authorization server said: ${error}. Go back to your client and try again.`
          : 'That server is no longer configured.',
      );
    try {
      await client.complete(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      log.warn({ server: pending.server, reason: (failure as Error).message }, 'a connection could not be completed');
      return page(c, 400, `Not connected to ${pending.server}`, (failure as Error).message);
    }
    log.info({ server: pending.server }, 'a caller connected their account');
    return page(
      c,
      200,
      `Connected to ${pending.server}`,
      'You can close this page and go back to your client: try the call again.',
    );
  });

  /**
   * On to the upstream's authorization server, for a link whose person is known to be (or confirmed as) its principal.
   */
  const authorize = async (c: Context<{ Bindings: HttpBindings }>, pending: ConnectPending): Promise<Response> => {
    const client = options.clients().get(pending.server);
    if (!client) return page(c, 404, 'Unknown server', 'That server is no longer configured.');
    try {
      return c.redirect(await client.authorizationUrl(pending.principal, pending.scopes), 302);
    } catch (failure) {
      log.warn(
        { server: pending.server, reason: (failure as Error).message },
        'an authorization request could not be started',
      );
      return page(c, 502, `Cannot connect to ${pending.server}`, (failure as Error).message);
    }
  };

  app.post('/connect/confirm', async (c) => {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    // Only the confirmation page's own id: a link's id posted here would skip the sign-in.
    const confirmed = id ? await store.takePending<Confirmation>(id) : undefined;
    if (confirmed?.step !== 'confirm') return expired(c);
    return authorize(c, confirmed.link);
  });

  app.get('/connect/signed-in', async (c) => {
    const state = c.req.query('state');
    const pending = state && options.signIn ? await store.takePending<SignInPending>(state) : undefined;
    if (pending?.step !== 'sign-in') {
      return page(
        c,
        400,
        'This sign-in cannot be finished',
        'It was used already, it expired, or it did not start here. Go back to your client and try the call again ' +
          'for a new link.',
      );
    }
    const link = pending.link;
    const error = c.req.query('error');
    const wrongIssuer = signInIssuerProblem(pending, c.req.query('iss'));
    if (error !== undefined && wrongIssuer === undefined)
      return page(
        c,
        400,
        `Not connected to ${link.server}`,
        `The sign-in was not completed (${error}). Go back to your client and try the call again for a new link.`,
      );
    let outcome: SignedIn;
    try {
      outcome = await options.signIn!.finish(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      log.warn(
        { server: link.server, reason: (failure as Error).message },
        'a connect link sign-in could not be completed',
      );
      return page(c, 502, `Not connected to ${link.server}`, `Signing you in failed: ${(failure as Error).message}`);
    }
    if (!outcome.ok && outcome.signedInAs !== undefined) {
      log.warn(
        { server: link.server, principal: link.principal },
        'a connect link was opened by someone signed in as another principal; refused',
      );
      const body =
        `<p>This link was made for <b>${escapeHtml(link.principal)}</b>, and you signed in as ` +
        `<b>${escapeHtml(outcome.signedInAs)}</b>. Nothing was connected.</p>
<p>A connect link connects an account to the person it was made for. If you are ${escapeHtml(outcome.signedInAs)}, ask your own MCP client for a link; if you meant to act as ${escapeHtml(link.principal)}, sign out at your identity provider and open a new link.</p>`;
      return c.html(shell('This link is not yours', body), 403, NO_STORE);
    }
    if (!outcome.ok)
      return page(
        c,
        400,
        `Not connected to ${link.server}`,
        `${outcome.reason}. Go back to your client and try the call again for a new link.`,
      );
    return authorize(c, link);
  });

  app.get('/connect/:link', async (c) => {
    // Taking the link spends it; the sign-in or the confirmation page carries a fresh single-use id of its own.
    const pending = await store.takePending<ConnectPending>(c.req.param('link'));
    if (pending?.step !== 'connect') return expired(c);
    if (options.signIn) {
      try {
        const signInAt = await options.signIn.start(pending);
        if (signInAt !== undefined) return c.redirect(signInAt, 302);
      } catch (failure) {
        log.warn(
          { server: pending.server, reason: (failure as Error).message },
          'a connect link sign-in could not be started',
        );
        return page(
          c,
          502,
          `Cannot connect to ${pending.server}`,
          `The gateway cannot sign you in: ${(failure as Error).message}`,
        );
      }
    }
    const confirmation: Confirmation = { step: 'confirm', link: pending };
    const confirm = await store.putPending(confirmation, 600_000);
    const body =
      `<p>You are about to connect <b>${escapeHtml(pending.server)}</b> for ` +
      `<b>${escapeHtml(pending.principal)}</b>.</p>
<p>Continue only if you are ${escapeHtml(pending.principal)} and you asked your MCP client for this just now: whoever finishes this connects their ${escapeHtml(pending.server)} account to ${escapeHtml(pending.principal)}.</p>
<form method="post" action="confirm"><input type="hidden" name="link" value="${confirm}"><button type="submit">Connect ${escapeHtml(pending.server)}</button></form>`;
    return c.html(shell(`Connect ${pending.server}`, body), 200, NO_STORE);
  });

  app.get('/connections', async (c) => {
    const principal = await options.authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to see your connections' }, 401);
    return c.json({ principal, connections: await store.list(principal) }, 200, NO_STORE);
  });

  app.delete('/connections/:server', async (c) => {
    const principal = await options.authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to revoke a connection' }, 401);
    const removed = await store.delete(principal, c.req.param('server'));
    return c.json({ removed }, removed ? 200 : 404, NO_STORE);
  });
}

/** What the confirmation page's button carries (sealed in the store): the link it confirms. */
interface Confirmation {
  step: 'confirm';
  link: ConnectPending;
}

const NO_STORE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

function expired(c: Context<{ Bindings: HttpBindings }>): Response {
  return page(
    c,
    410,
    'This link cannot be used',
    'It was used already, it expired, or it was never issued. Go back to your client and try the call again for a ' +
      'new link.',
  );
}

function page(
  c: Context<{ Bindings: HttpBindings }>,
  status: 200 | 400 | 403 | 404 | 410 | 502,
  title: string,
  text: string,
): Response {
  return c.html(shell(title, `<p>${escapeHtml(text)}</p>`), status, NO_STORE);
}

function shell(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><meta ` +
    `name="viewport" content="width=device-width"></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
