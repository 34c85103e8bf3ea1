// The pages where a person pastes a secret a perCaller server's child needs (servers.<name>.secrets), under
// listen.publicUrl (docs/connect-flow.md):
//   GET  /secrets/<link>     the link from the MCP client, never spent by a GET: without sign-in the paste
//                            form itself (its POST spends the link); with sign-in a page naming who and what,
//                            whose button goes on
//   POST /secrets/confirm    that button: spends the link, binds the browser, signs the person in at
//                            auth.jwt's issuer (oauth/sign-in.ts; /connect/signed-in comes back to the form)
//   GET  /secrets/form/<id>  the paste form after the sign-in: only in the browser that confirmed
//   POST /secrets/save       the form: the values checked, then stored encrypted for that principal and server
// and, with the caller's usual credentials: GET /connections (their stored credentials of every kind, never
// the values), DELETE /connections/<server> (revoke; their child for it is stopped). Nothing here writes a
// value or a link to a page or a log.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { SecretPending } from './record.js';
import type { GatewaySignIn } from './oauth/sign-in.js';
import { BrowserBinding, OTHER_BROWSER, redirect } from './pages/browser-binding.js';
import { CONFIRM_BODY_BYTES, formGuard, PASTE_BODY_BYTES } from './pages/form-guard.js';
import { escapeHtml, htmlPage, linkUnusable, type PageContext, textPage } from './pages/page.js';
import { operatorErrorPage } from './pages/reference.js';
import { SECRET_FIELD, type SecretFormPending, secretFormPage } from './pages/secret-form.js';
import { addConnectionRoutes } from './connections-routes.js';
import type { CredentialStore } from './store.js';

type App = Hono<{ Bindings: HttpBindings }>;

export interface SecretRouteOptions {
  store: CredentialStore;
  /** What a server asks callers to paste (variable → prompt), as of now; undefined: no such server (any more). */
  secretsOf(server: string): Readonly<Record<string, { prompt: string }>> | undefined;
  linkTtlMs: number;
  /** The principal of an Authorization header, or undefined when it is not accepted. */
  authenticate(authorization: string | undefined): Promise<string | undefined>;
  /** Whether GET/DELETE /connections are served here (false once the OAuth connect pages serve them). */
  connections: boolean;
  /** listen.publicUrl: the origin every POST must come from. */
  publicUrl: string | undefined;
  /** Signing the person in at auth.jwt's issuer before the form; absent without auth.jwt. */
  signIn?: GatewaySignIn | undefined;
  /** servers.<name>.title, else the name: what pages call a server. */
  displayName(server: string): string;
  log: Log;
}

/** Whether `text` holds a control character a pasted value may not: any but tab, line feed and carriage return. */
function holdsControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

export function addSecretRoutes(app: App, options: SecretRouteOptions): void {
  const flow = new PasteFlow(options);
  app.post('/secrets/save', formGuard(options.publicUrl, PASTE_BODY_BYTES), (c) => flow.save(c));
  app.post('/secrets/confirm', formGuard(options.publicUrl, CONFIRM_BODY_BYTES), (c) => flow.confirm(c));
  app.get('/secrets/form/:id', (c) => flow.formPage(c, c.req.param('id')));
  app.get('/secrets/:link', (c) => flow.linkPage(c, c.req.param('link')));
  if (options.connections) addConnectionRoutes(app, options);
}

/** The steps of a paste link, each a method. */
class PasteFlow {
  private readonly browsers: BrowserBinding;
  private readonly store: CredentialStore;
  private readonly log: Log;

  constructor(private readonly options: SecretRouteOptions) {
    this.browsers = new BrowserBinding(options.publicUrl);
    this.store = options.store;
    this.log = options.log;
  }

  /** GET /secrets/<id>: a look, never a take; the form's (or the confirmation's) POST spends the link. */
  async linkPage(c: PageContext, id: string): Promise<Response> {
    const link = await this.store.peekPending<SecretPending>(id);
    if (link?.step !== 'secret') return linkUnusable(c);
    const wanted = this.options.secretsOf(link.server);
    if (!wanted) return textPage(c, 404, 'Unknown server', 'That server is no longer configured.');
    const name = this.options.displayName(link.server);
    if (!this.options.signIn) return secretFormPage(c, { id, link, wanted, displayName: name });
    const who = escapeHtml(link.principal);
    const body =
      `<p>${escapeHtml(name)} needs values only <b>${who}</b> should give it: ` +
      `${Object.keys(wanted)
        .map((key) => `<code>${escapeHtml(key)}</code>`)
        .join(', ')}.</p>` +
      `<p>You will first sign in at <b>${escapeHtml(hostOf(this.options.signIn.issuer))}</b>, then paste them ` +
      `here. Continue only if you are ${who} and you asked your MCP client for this just now. Opening this page ` +
      'used nothing up; the button does.</p>' +
      `<form method="post" action="/secrets/confirm"><input type="hidden" name="link" value="${escapeHtml(id)}">` +
      '<button type="submit">Continue to sign in</button></form>';
    return htmlPage(c, 200, `Connect ${name}`, body);
  }

  /** POST /secrets/confirm (with sign-in): spends the link, binds this browser, signs the person in. */
  async confirm(c: PageContext): Promise<Response> {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const link = id ? await this.store.takePending<SecretPending>(id) : undefined;
    if (link?.step !== 'secret') return linkUnusable(c);
    const binding = this.browsers.bind(c.req.header('cookie'));
    try {
      const signInAt = await this.options.signIn?.start(link, binding.hash);
      if (signInAt !== undefined) return redirect(signInAt, binding);
    } catch (failure) {
      const title = `Cannot connect to ${this.options.displayName(link.server)}`;
      return operatorErrorPage(c, this.log, { title, failure, server: link.server, what: 'a sign-in could not start' });
    }
    // An issuer without an authorization endpoint: straight to the form, bound to this browser.
    const pending: SecretFormPending = { step: 'secret-form', link, binding: binding.hash };
    return redirect(`/secrets/form/${await this.store.putPending(pending, this.options.linkTtlMs)}`, binding);
  }

  /** GET /secrets/form/<id>: the paste form after the sign-in, only in the browser that confirmed. */
  async formPage(c: PageContext, id: string): Promise<Response> {
    const pending = await this.store.peekPending<SecretFormPending>(id);
    if (pending?.step !== 'secret-form') return linkUnusable(c);
    if (!this.browsers.matches(c.req.header('cookie'), pending.binding))
      return textPage(c, 403, 'This form is not for this browser', OTHER_BROWSER);
    const wanted = this.options.secretsOf(pending.link.server);
    if (!wanted) return textPage(c, 404, 'Unknown server', 'That server is no longer configured.');
    const displayName = this.options.displayName(pending.link.server);
    return secretFormPage(c, { id, link: pending.link, wanted, displayName });
  }

  /** POST /secrets/save: every value checked before the link is spent, so a refused one can be pasted again. */
  async save(c: PageContext): Promise<Response> {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const pending = id ? await this.store.peekPending<SecretPending | SecretFormPending>(id) : undefined;
    const link = this.pasteLinkOf(c, pending);
    if (link === undefined || link instanceof Response) return link ?? linkUnusable(c);
    const wanted = this.options.secretsOf(link.server);
    if (!wanted) return textPage(c, 404, 'Unknown server', 'That server is no longer configured.');
    const values = valuesIn(form, wanted);
    if (typeof values === 'string') return textPage(c, 400, 'Nothing was saved', values);
    if ((await this.store.takePending(id!)) === undefined) return linkUnusable(c);
    await this.store.put(link.principal, link.server, { kind: 'secret', values, connectedAt: Date.now() });
    this.log.info({ server: link.server, secrets: Object.keys(values) }, 'a caller saved their secrets');
    const done = 'You can close this page and go back to your client: try the call again.';
    return textPage(c, 200, `Saved for ${this.options.displayName(link.server)}`, done);
  }

  /** The link a save is for, or a refusal: a paste link only without sign-in, a form only in its own browser. */
  private pasteLinkOf(
    c: PageContext,
    pending: SecretPending | SecretFormPending | undefined,
  ): SecretPending | Response | undefined {
    if (pending?.step === 'secret') return this.options.signIn ? undefined : pending; // with sign-in: no skipping it
    if (pending?.step !== 'secret-form') return undefined;
    if (this.browsers.matches(c.req.header('cookie'), pending.binding)) return pending.link;
    this.log.warn({ server: pending.link.server }, 'a paste form was sent from another browser than the link; refused');
    return textPage(c, 403, 'Nothing was saved', OTHER_BROWSER);
  }
}

/** The pasted values, trimmed, or why not (naming the field): empty, or holding a control character. */
function valuesIn(
  form: Record<string, unknown>,
  wanted: Readonly<Record<string, { prompt: string }>>,
): Record<string, string> | string {
  const values: Record<string, string> = {};
  for (const [name, { prompt }] of Object.entries(wanted)) {
    const value = form[`${SECRET_FIELD}${name}`];
    const field = `"${prompt}" (${name})`;
    if (typeof value !== 'string' || value.trim() === '')
      return `${field} was empty. Go back, fill it in and save again.`;
    if (holdsControl(value))
      return (
        `${field} holds a control character (such as NUL) that no secret has: only tabs and line breaks may be ` +
        'pasted. Go back, paste the value again without it, and save.'
      );
    values[name] = value.trim();
  }
  return values;
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}
