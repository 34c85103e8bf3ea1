// The page where a person pastes a secret a perCaller server's child needs (servers.<name>.secrets), under
// listen.publicUrl:
//   GET  /secrets/<link>   the link from the MCP client: single use, expiring, bound to principal and server;
//                          a form naming who and what, one password field per secret
//   POST /secrets/save     that form: the values stored encrypted for that principal and server only
// and, with the caller's usual credentials: GET /connections (their stored credentials of every kind, never
// the values), DELETE /connections/<server> (revoke; their child for it is stopped). Nothing here writes a
// value to a page or a log.
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { SecretPending } from '../layers/per-caller/secret-env.js';
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
  log: Log;
}

const FIELD = 'value:';

export function addSecretRoutes(app: App, options: SecretRouteOptions): void {
  const { store, log } = options;

  app.post('/secrets/save', async (c) => {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const pending = id ? await store.takePending<SecretPending>(id) : undefined;
    if (pending?.step !== 'secret') return expired(c);
    const wanted = options.secretsOf(pending.server);
    if (!wanted) return page(c, 404, 'Unknown server', 'That server is no longer configured.');
    const values: Record<string, string> = {};
    for (const name of Object.keys(wanted)) {
      const value = form[`${FIELD}${name}`];
      if (typeof value !== 'string' || value.trim() === '')
        return page(
          c,
          400,
          'Nothing was saved',
          `${name} was empty. Go back to your client and try the call again for a new link.`,
        );
      values[name] = value.trim();
    }
    await store.put(pending.principal, pending.server, { kind: 'secret', values, connectedAt: Date.now() });
    log.info(
      { server: pending.server, secrets: Object.keys(values) },
      'a caller saved their secrets for a per-caller server',
    );
    return page(
      c,
      200,
      `Saved for ${pending.server}`,
      'You can close this page and go back to your client: try the call again.',
    );
  });

  app.get('/secrets/:link', async (c) => {
    // Taking the link spends it; the form carries a fresh single-use id of its own.
    const pending = await store.takePending<SecretPending>(c.req.param('link'));
    if (pending?.step !== 'secret') return expired(c);
    const wanted = options.secretsOf(pending.server);
    if (!wanted) return page(c, 404, 'Unknown server', 'That server is no longer configured.');
    const form = await store.putPending(pending, options.linkTtlMs);
    const fields = Object.entries(wanted)
      .map(
        ([name, { prompt }]) =>
          `<p><label>${escapeHtml(prompt)} (<code>${escapeHtml(name)}</code>)<br><input type="password" ` +
          `name="${FIELD}${escapeHtml(name)}" autocomplete="off" required></label></p>`,
      )
      .join('');
    const body =
      `<p>${escapeHtml(pending.server)} runs as <b>${escapeHtml(pending.principal)}</b> with what you ` +
      `paste here. It is kept encrypted, used only for your own ${escapeHtml(pending.server)} process, and you can ` +
      `revoke it (DELETE /connections/${escapeHtml(pending.server)}).</p>
<p>Continue only if you are ${escapeHtml(pending.principal)} and you asked your MCP client for this just now.</p>
<form method="post" action="save"><input type="hidden" name="link" value="${form}">${fields}<button type="submit">Save</button></form>`;
    return c.html(shell(`Connect ${pending.server}`, body), 200, PAGE_HEADERS);
  });

  if (!options.connections) return;
  app.get('/connections', async (c) => {
    const principal = await options.authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to see your connections' }, 401);
    return c.json({ principal, connections: await store.list(principal) }, 200, PAGE_HEADERS);
  });

  app.delete('/connections/:server', async (c) => {
    const principal = await options.authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to revoke a connection' }, 401);
    const removed = await store.delete(principal, c.req.param('server'));
    return c.json({ removed }, removed ? 200 : 404, PAGE_HEADERS);
  });
}

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
};

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
  status: 200 | 400 | 404 | 410,
  title: string,
  text: string,
): Response {
  return c.html(shell(title, `<p>${escapeHtml(text)}</p>`), status, PAGE_HEADERS);
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
