// The pages a person's browser meets while connecting an account, under listen.publicUrl (docs/connect-flow.md):
//   GET  /connect/<link>     the link from the MCP client: a page saying what is connected, for whom, where the
//                            person will be sent and which scopes are asked, with one button. A GET never
//                            spends the link (link previews, mail scanners and reloads are harmless)
//   POST /connect/confirm    that button: spends the link, binds the browser (pages/browser-binding.ts), then
//                            the sign-in at auth.jwt's issuer when there is one (oauth/sign-in.ts), else on to
//                            the upstream's authorization (discovery, PKCE, resource)
//   GET  /connect/signed-in  the issuer's redirect: same browser, the person is the link's principal, then on
//                            to the upstream's authorization, or to a paste link's form
//   GET  /connect/callback   the authorization server's redirect: same browser, the code exchanged, stored
//   GET  /oauth/client-metadata.json   the gateway's Client ID Metadata Document (its client_id where accepted)
// and, with the caller's usual credentials: GET /connections (theirs, never the tokens), DELETE
// /connections/<server> (revoke). Nothing here ever writes a token, a code or a link to a page or a log.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { SecretPending } from '../layers/per-caller/secret-env.js';
import { clientMetadata } from './oauth/client-identity.js';
import {
  type AuthorizationPending,
  type ConnectPending,
  issuerProblem,
  type OAuthClient,
} from './oauth/oauth-client.js';
import { type GatewaySignIn, type SignedIn, type SignInPending, signInIssuerProblem } from './oauth/sign-in.js';
import { type Binding, BrowserBinding, OTHER_BROWSER, redirect } from './pages/browser-binding.js';
import { CONFIRM_BODY_BYTES, formGuard } from './pages/form-guard.js';
import { escapeHtml, htmlPage, linkUnusable, type PageContext, textPage } from './pages/page.js';
import { operatorErrorPage } from './pages/reference.js';
import type { SecretFormPending } from './pages/secret-form.js';
import type { CredentialStore } from './store.js';

type App = Hono<{ Bindings: HttpBindings }>;

export interface ConnectRouteOptions {
  store: CredentialStore;
  /** The OAuth clients by server name, as of now (a reload may change them). */
  clients(): ReadonlyMap<string, OAuthClient>;
  /** The principal of an Authorization header, or undefined when it is not accepted. */
  authenticate(authorization: string | undefined): Promise<string | undefined>;
  /** listen.publicUrl: the origin every POST must come from, and where the client metadata lives. */
  publicUrl?: string | undefined;
  /** Signing the person in at auth.jwt's issuer before a link goes on; absent without auth.jwt. */
  signIn?: GatewaySignIn | undefined;
  /** servers.<name>.title, else the name: what pages call a server (the name when absent). */
  displayName?(server: string): string;
  /** credentials.linkTtlMs: how long a paste form waits after its sign-in (10 minutes when absent). */
  linkTtlMs?: number;
  log: Log;
}

export function addConnectRoutes(app: App, options: ConnectRouteOptions): void {
  const { store, log } = options;
  const displayName = options.displayName ?? ((server: string) => server);
  const browsers = new BrowserBinding(options.publicUrl);

  // The gateway's Client ID Metadata Document: its URL is its client_id at authorization servers that accept one.
  app.get('/oauth/client-metadata.json', (c) => {
    if (options.publicUrl === undefined)
      return c.json({ error: 'set listen.publicUrl to serve the client metadata document' }, 404);
    return c.json(clientMetadata(options.publicUrl), 200, { 'cache-control': 'public, max-age=3600' });
  });

  app.get('/connect/callback', async (c) => {
    const state = c.req.query('state');
    const pending = state ? await store.takePending<AuthorizationPending>(state) : undefined;
    if (pending?.step !== 'authorize') return cannotFinish(c);
    const name = displayName(pending.server);
    if (!browsers.matches(c.req.header('cookie'), pending.binding)) {
      log.warn(
        { server: pending.server },
        'an authorization response arrived in another browser than the link; refused',
      );
      return textPage(c, 403, `Not connected to ${name}`, OTHER_BROWSER);
    }
    // RFC 9207 first: a response from another issuer is neither acted on nor shown, its error included.
    const wrongIssuer = issuerProblem(pending, c.req.query('iss'));
    if (wrongIssuer !== undefined) {
      log.warn({ server: pending.server }, 'an authorization response from another issuer was refused (RFC 9207)');
      return textPage(c, 400, `Not connected to ${name}`, wrongIssuer);
    }
    const client = options.clients().get(pending.server);
    const error = c.req.query('error');
    if (!client || error)
      return textPage(
        c,
        400,
        `Not connected to ${name}`,
        error
          ? `The authorization server said: ${error}. Go back to your client and try again.`
          : 'That server is no longer configured.',
      );
    try {
      await client.complete(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      const context = { server: pending.server };
      return operatorErrorPage(
        c,
        log,
        `Not connected to ${name}`,
        failure,
        context,
        'a connection could not be completed',
      );
    }
    log.info({ server: pending.server }, 'a caller connected their account');
    return textPage(
      c,
      200,
      `Connected to ${name}`,
      'You can close this page and go back to your client: try the call again.',
    );
  });

  /** On to the upstream's authorization server, for a link confirmed in the browser whose binding is `binding`. */
  const authorize = async (c: PageContext, link: ConnectPending, binding: Binding): Promise<Response> => {
    const client = options.clients().get(link.server);
    if (!client) return textPage(c, 404, 'Unknown server', 'That server is no longer configured.');
    try {
      return redirect(await client.authorizationUrl(link.principal, link.scopes, binding.hash), binding);
    } catch (failure) {
      const title = `Cannot connect to ${displayName(link.server)}`;
      return operatorErrorPage(
        c,
        log,
        title,
        failure,
        { server: link.server },
        'an authorization request could not be started',
      );
    }
  };

  /** The sign-in first when there is one; else the link goes straight on. */
  const startSignIn = async (c: PageContext, link: ConnectPending, binding: Binding) => {
    let signInAt: string | undefined;
    try {
      signInAt = await options.signIn?.start(link, binding.hash);
    } catch (failure) {
      const title = `Cannot connect to ${displayName(link.server)}`;
      return operatorErrorPage(c, log, title, failure, { server: link.server }, 'a link sign-in could not be started');
    }
    if (signInAt !== undefined) return redirect(signInAt, binding);
    return goOn(c, link, binding);
  };

  /** After the sign-in (or without one): the upstream's authorization, or a paste link's form (secret-routes.ts). */
  const goOn = async (c: PageContext, link: ConnectPending | SecretPending, binding: Binding): Promise<Response> => {
    if (link.step === 'connect') return authorize(c, link, binding);
    const form: SecretFormPending = { step: 'secret-form', link, binding: binding.hash };
    return redirect(`/secrets/form/${await store.putPending(form, options.linkTtlMs ?? 600_000)}`, binding);
  };

  app.post('/connect/confirm', formGuard(options.publicUrl, CONFIRM_BODY_BYTES), async (c) => {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const link = id ? await store.takePending<ConnectPending>(id) : undefined;
    if (link?.step !== 'connect') return linkUnusable(c);
    return startSignIn(c, link, browsers.bind(c.req.header('cookie')));
  });

  app.get('/connect/signed-in', async (c) => {
    const state = c.req.query('state');
    const pending = state && options.signIn ? await store.takePending<SignInPending>(state) : undefined;
    if (pending?.step !== 'sign-in') return cannotFinish(c);
    const link = pending.link;
    const name = displayName(link.server);
    if (!browsers.matches(c.req.header('cookie'), pending.binding)) {
      log.warn({ server: link.server }, 'a sign-in answer arrived in another browser than the link; refused');
      return textPage(c, 403, `Not connected to ${name}`, OTHER_BROWSER);
    }
    const error = c.req.query('error');
    const wrongIssuer = signInIssuerProblem(pending, c.req.query('iss'));
    if (error !== undefined && wrongIssuer === undefined)
      return textPage(
        c,
        400,
        `Not connected to ${name}`,
        `The sign-in was not completed (${error}). Go back to your client and try the call again for a new link.`,
      );
    let outcome: SignedIn;
    try {
      outcome = await options.signIn!.finish(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      const title = `Not connected to ${name}`;
      return operatorErrorPage(
        c,
        log,
        title,
        failure,
        { server: link.server },
        'a link sign-in could not be completed',
      );
    }
    if (!outcome.ok && outcome.signedInAs !== undefined) {
      log.warn({ server: link.server }, 'a link was opened by someone signed in as another principal; refused');
      return notYours(c, link.principal, outcome.signedInAs);
    }
    if (!outcome.ok)
      return textPage(
        c,
        400,
        `Not connected to ${name}`,
        `${outcome.reason}. Go back to your client and try the call again for a new link.`,
      );
    return goOn(c, link, { hash: pending.binding });
  });

  app.get('/connect/:link', async (c) => {
    // A look, never a take: the confirming POST spends the link.
    const id = c.req.param('link');
    const link = await store.peekPending<ConnectPending>(id);
    if (link?.step !== 'connect') return linkUnusable(c);
    return confirmationPage(c, id, link, await destinationOf(options, link));
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

  /** The confirmation page of a connect link: whose, what, where to, which scopes; its button spends the link. */
  function confirmationPage(c: PageContext, id: string, link: ConnectPending, destination: Destination): Response {
    const name = escapeHtml(displayName(link.server));
    const who = escapeHtml(link.principal);
    const server = link.server === displayName(link.server) ? '' : ` (<code>${escapeHtml(link.server)}</code>)`;
    const signInHost = options.signIn ? hostOf(options.signIn.issuer) : undefined;
    const to =
      (signInHost ? `first to sign in at <b>${escapeHtml(signInHost)}</b>, then ` : '') +
      (destination.host ? `to <b>${escapeHtml(destination.host)}</b>` : "to the server's authorization server");
    const scopes = destination.scopes?.length
      ? destination.scopes.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(' ')
      : destination.scopes
        ? 'what the authorization server grants by default'
        : 'shown by the authorization server';
    const body =
      `<p>You are about to connect your <b>${name}</b> account${server} for <b>${who}</b>.</p>` +
      `<dl><dt>Connecting</dt><dd>${name}${server}</dd><dt>For</dt><dd>${who}</dd>` +
      `<dt>You will be sent</dt><dd>${to}</dd><dt>Access asked</dt><dd>${scopes}</dd></dl>` +
      `<p>Continue only if you are ${who} and you asked your MCP client for this just now: whoever finishes this ` +
      `connects their ${name} account to ${who}. Opening this page used nothing up; the button does.</p>` +
      `<form method="post" action="/connect/confirm"><input type="hidden" name="link" value="${escapeHtml(id)}">` +
      `<button type="submit">Connect ${name}</button></form>`;
    return htmlPage(c, 200, `Connect ${displayName(link.server)}`, body);
  }
}

/** Where the person will be sent and the scopes asked, as far as known without spending anything. */
interface Destination {
  host?: string;
  scopes?: string[];
}

async function destinationOf(options: ConnectRouteOptions, link: ConnectPending): Promise<Destination> {
  const client = options.clients().get(link.server);
  if (!client) return link.scopes ? { scopes: link.scopes } : {};
  try {
    return await client.destination(link.scopes);
  } catch (failure) {
    // Said (with a reference) when the person presses the button; the page itself still shows.
    options.log.debug({ server: link.server, reason: (failure as Error).message }, 'no destination for a link page');
    return link.scopes ? { scopes: link.scopes } : {};
  }
}

function cannotFinish(c: PageContext): Response {
  return textPage(
    c,
    400,
    'This sign-in cannot be finished',
    'It was used already, it expired, or it did not start here. Go back to your client and try the call again for a ' +
      'new link.',
  );
}

function notYours(c: PageContext, principal: string, signedInAs: string): Response {
  const body =
    `<p>This link was made for <b>${escapeHtml(principal)}</b>, and you signed in as ` +
    `<b>${escapeHtml(signedInAs)}</b>. Nothing was connected.</p><p>A link connects an account to the person it ` +
    `was made for. If you are ${escapeHtml(signedInAs)}, ask your own MCP client for a link; if you meant to act ` +
    `as ${escapeHtml(principal)}, sign out at your identity provider and open a new link.</p>`;
  return htmlPage(c, 403, 'This link is not yours', body);
}

function hostOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).host : undefined;
}

const NO_STORE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
