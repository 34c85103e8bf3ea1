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
import { addConnectionRoutes } from './connections-routes.js';
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
  const flow = new ConnectFlow(options);
  // The gateway's Client ID Metadata Document: its URL is its client_id at authorization servers that accept one.
  app.get('/oauth/client-metadata.json', (c) => {
    if (options.publicUrl === undefined)
      return c.json({ error: 'set listen.publicUrl to serve the client metadata document' }, 404);
    return c.json(clientMetadata(options.publicUrl), 200, { 'cache-control': 'public, max-age=3600' });
  });
  app.get('/connect/callback', (c) => flow.callback(c));
  app.post('/connect/confirm', formGuard(options.publicUrl, CONFIRM_BODY_BYTES), (c) => flow.confirm(c));
  app.get('/connect/signed-in', (c) => flow.signedIn(c));
  app.get('/connect/:link', (c) => flow.linkPage(c, c.req.param('link')));
  addConnectionRoutes(app, {
    ...options,
    linkTtlMs: options.linkTtlMs ?? 600_000,
    displayName: options.displayName ?? ((server) => server),
  });
}

/** The steps of a connect link, each a method; what they share (the store, the binding, the names) is here. */
class ConnectFlow {
  private readonly browsers: BrowserBinding;
  private readonly log: Log;
  private readonly displayName: (server: string) => string;

  constructor(private readonly options: ConnectRouteOptions) {
    this.browsers = new BrowserBinding(options.publicUrl);
    this.log = options.log;
    this.displayName = options.displayName ?? ((server: string) => server);
  }

  /** GET /connect/<id>: a look, never a take; the confirming POST spends the link. */
  async linkPage(c: PageContext, id: string): Promise<Response> {
    const link = await this.options.store.peekPending<ConnectPending>(id);
    if (link?.step !== 'connect') return linkUnusable(c);
    return this.confirmationPage(c, id, link, await destinationOf(this.options, link));
  }

  /** POST /connect/confirm: spends the link and binds this browser; the sign-in, or the upstream's authorization. */
  async confirm(c: PageContext): Promise<Response> {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const link = id ? await this.options.store.takePending<ConnectPending>(id) : undefined;
    if (link?.step !== 'connect') return linkUnusable(c);
    const binding = this.browsers.bind(c.req.header('cookie'));
    let signInAt: string | undefined;
    try {
      signInAt = await this.options.signIn?.start(link, binding.hash);
    } catch (failure) {
      const title = `Cannot connect to ${this.displayName(link.server)}`;
      return operatorErrorPage(c, this.log, { title, failure, server: link.server, what: 'a sign-in could not start' });
    }
    if (signInAt !== undefined) return redirect(signInAt, binding);
    return this.authorize(c, link, binding);
  }

  /** GET /connect/signed-in: the issuer's redirect, in the browser that confirmed, as the link's principal. */
  async signedIn(c: PageContext): Promise<Response> {
    const state = c.req.query('state');
    const pending =
      state && this.options.signIn ? await this.options.store.takePending<SignInPending>(state) : undefined;
    if (pending?.step !== 'sign-in') return cannotFinish(c);
    const link = pending.link;
    const title = `Not connected to ${this.displayName(link.server)}`;
    if (!this.browsers.matches(c.req.header('cookie'), pending.binding)) {
      this.log.warn({ server: link.server }, 'a sign-in answer arrived in another browser than the link; refused');
      return textPage(c, 403, title, OTHER_BROWSER);
    }
    const error = c.req.query('error');
    if (error !== undefined && signInIssuerProblem(pending, c.req.query('iss')) === undefined) {
      const text =
        `The sign-in was not completed (${error}). Go back to your client and try the call again for a ` + 'new link.';
      return textPage(c, 400, title, text);
    }
    let outcome: SignedIn;
    try {
      outcome = await this.options.signIn!.finish(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      return operatorErrorPage(c, this.log, {
        title,
        failure,
        server: link.server,
        what: 'a sign-in could not finish',
      });
    }
    if (!outcome.ok && outcome.signedInAs !== undefined) {
      this.log.warn({ server: link.server }, 'a link was opened by someone signed in as another principal; refused');
      return notYours(c, link.principal, outcome.signedInAs);
    }
    if (!outcome.ok)
      return textPage(
        c,
        400,
        title,
        `${outcome.reason}. Go back to your client and try the call again for a new link.`,
      );
    const binding = { hash: pending.binding };
    if (link.step === 'connect') return this.authorize(c, link, binding);
    // A paste link: on to its form (secret-routes.ts), bound to the same browser.
    const form: SecretFormPending = { step: 'secret-form', link, binding: pending.binding };
    const id = await this.options.store.putPending(form, this.options.linkTtlMs ?? 600_000);
    return redirect(`/secrets/form/${id}`, binding);
  }

  /** GET /connect/callback: the authorization server's redirect, in the browser that confirmed. */
  async callback(c: PageContext): Promise<Response> {
    const state = c.req.query('state');
    const pending = state ? await this.options.store.takePending<AuthorizationPending>(state) : undefined;
    if (pending?.step !== 'authorize') return cannotFinish(c);
    const { server } = pending;
    const title = `Not connected to ${this.displayName(server)}`;
    if (!this.browsers.matches(c.req.header('cookie'), pending.binding)) {
      this.log.warn({ server }, 'an authorization response arrived in another browser than the link; refused');
      return textPage(c, 403, title, OTHER_BROWSER);
    }
    // RFC 9207 first: a response from another issuer is neither acted on nor shown, its error included.
    const wrongIssuer = issuerProblem(pending, c.req.query('iss'));
    if (wrongIssuer !== undefined) {
      this.log.warn({ server }, 'an authorization response from another issuer was refused (RFC 9207)');
      return textPage(c, 400, title, wrongIssuer);
    }
    const client = this.options.clients().get(server);
    const error = c.req.query('error');
    if (error)
      return textPage(c, 400, title, `The authorization server said: ${error}. Go back to your client and try again.`);
    if (!client) return textPage(c, 400, title, 'That server is no longer configured.');
    try {
      await client.complete(pending, c.req.query('code') ?? '', c.req.query('iss'));
    } catch (failure) {
      return operatorErrorPage(c, this.log, { title, failure, server, what: 'a connection could not be completed' });
    }
    this.log.info({ server }, 'a caller connected their account');
    const done = 'You can close this page and go back to your client: try the call again.';
    return textPage(c, 200, `Connected to ${this.displayName(server)}`, done);
  }

  /** On to the upstream's authorization server, for a link confirmed in the browser whose binding is `binding`. */
  private async authorize(c: PageContext, link: ConnectPending, binding: Binding): Promise<Response> {
    const client = this.options.clients().get(link.server);
    if (!client) return textPage(c, 404, 'Unknown server', 'That server is no longer configured.');
    try {
      return redirect(await client.authorizationUrl(link.principal, link.scopes, binding.hash), binding);
    } catch (failure) {
      const title = `Cannot connect to ${this.displayName(link.server)}`;
      const what = 'an authorization request could not be started';
      return operatorErrorPage(c, this.log, { title, failure, server: link.server, what });
    }
  }

  /** The confirmation page of a connect link: whose, what, where to, which scopes; its button spends the link. */
  private confirmationPage(c: PageContext, id: string, link: ConnectPending, destination: Destination): Response {
    const name = escapeHtml(this.displayName(link.server));
    const who = escapeHtml(link.principal);
    const server = link.server === this.displayName(link.server) ? '' : ` (<code>${escapeHtml(link.server)}</code>)`;
    const signInHost = this.options.signIn ? hostOf(this.options.signIn.issuer) : undefined;
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
    return htmlPage(c, 200, `Connect ${this.displayName(link.server)}`, body);
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
