// A caller's own connections. With their usual credentials (an MCP client, a script): GET /connections lists
// theirs (kind and dates, never a token or a value) and hands out a link to the connections page; DELETE
// /connections/<server> revokes one. A browser holds no bearer token, so the page is reached the way a
// connect link is (issue 46 item 3; docs/connect-flow.md):
//   GET  /connections/page/<id>   what the link is for, never spending it; one button
//   POST /connections/open        spends the link, binds the browser, and opens the list for that browser
//   GET  /connections/view/<id>   the list, with a revoke button per connection (only in that browser)
//   POST /connections/revoke      revokes one (same browser, same origin), then back to the list
// A revocation reaches every replica through the store (credentials.store: redis publishes it).
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import { BrowserBinding, OTHER_BROWSER, redirect } from './pages/browser-binding.js';
import { CONFIRM_BODY_BYTES, formGuard } from './pages/form-guard.js';
import { escapeHtml, htmlPage, linkUnusable, type PageContext, textPage } from './pages/page.js';
import type { ConnectionSummary } from './record.js';
import type { CredentialStore } from './store.js';

type App = Hono<{ Bindings: HttpBindings }>;

export interface ConnectionRouteOptions {
  store: CredentialStore;
  /** The principal of an Authorization header, or undefined when it is not accepted. */
  authenticate(authorization: string | undefined): Promise<string | undefined>;
  /** listen.publicUrl: where the page's link points, and the origin its POSTs must come from. */
  publicUrl?: string | undefined;
  /** How long the page's link, and the list once opened, may be used. */
  linkTtlMs: number;
  /** servers.<name>.title, else the name. */
  displayName(server: string): string;
  log: Log;
}

/** The link to the page: whose connections. */
interface PageLink {
  step: 'connections';
  principal: string;
}

/** The list opened in one browser: whose, and which browser. Not single use: revocations come back to it. */
interface OpenList {
  step: 'connections-list';
  principal: string;
  binding: string;
}

const NO_STORE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

export function addConnectionRoutes(app: App, options: ConnectionRouteOptions): void {
  const { store, authenticate } = options;
  app.get('/connections', async (c) => {
    const principal = await authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to see your connections' }, 401);
    const listed: { principal: string; connections: unknown[]; page?: string } = {
      principal,
      connections: await store.list(principal),
    };
    if (options.publicUrl !== undefined) {
      const id = await store.putPending({ step: 'connections', principal } satisfies PageLink, options.linkTtlMs);
      listed.page = `${options.publicUrl}/connections/page/${id}`;
    }
    return c.json(listed, 200, NO_STORE);
  });

  app.delete('/connections/:server', async (c) => {
    const principal = await authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to revoke a connection' }, 401);
    const removed = await store.delete(principal, c.req.param('server'));
    return c.json({ removed }, removed ? 200 : 404, NO_STORE);
  });

  if (options.publicUrl === undefined) return;
  const page = new ConnectionsPage(options);
  app.get('/connections/page/:id', (c) => page.linkPage(c, c.req.param('id')));
  app.post('/connections/open', formGuard(options.publicUrl, CONFIRM_BODY_BYTES), (c) => page.open(c));
  app.get('/connections/view/:id', (c) => page.list(c, c.req.param('id')));
  app.post('/connections/revoke', formGuard(options.publicUrl, CONFIRM_BODY_BYTES), (c) => page.revoke(c));
}

class ConnectionsPage {
  private readonly browsers: BrowserBinding;

  constructor(private readonly options: ConnectionRouteOptions) {
    this.browsers = new BrowserBinding(options.publicUrl);
  }

  /** GET /connections/page/<id>: a look, never a take. */
  async linkPage(c: PageContext, id: string): Promise<Response> {
    const link = await this.options.store.peekPending<PageLink>(id);
    if (link?.step !== 'connections') return linkUnusable(c);
    const who = escapeHtml(link.principal);
    const body =
      `<p>The accounts and secrets connected for <b>${who}</b>, with a button to revoke each.</p>` +
      `<p>Continue only if you are ${who} and you asked your MCP client for this just now. Opening this page ` +
      'used nothing up; the button does, and the list then opens in this browser only.</p>' +
      `<form method="post" action="/connections/open"><input type="hidden" name="link" value="${escapeHtml(id)}">` +
      '<button type="submit">Show my connections</button></form>';
    return htmlPage(c, 200, 'Your connections', body);
  }

  /** POST /connections/open: spends the link and opens the list for this browser. */
  async open(c: PageContext): Promise<Response> {
    const form = await c.req.parseBody();
    const id = typeof form.link === 'string' ? form.link : undefined;
    const link = id ? await this.options.store.takePending<PageLink>(id) : undefined;
    if (link?.step !== 'connections') return linkUnusable(c);
    const binding = this.browsers.bind(c.req.header('cookie'));
    const list: OpenList = { step: 'connections-list', principal: link.principal, binding: binding.hash };
    return redirect(`/connections/view/${await this.options.store.putPending(list, this.options.linkTtlMs)}`, binding);
  }

  /** GET /connections/view/<id>: the list, in the browser that opened it. */
  async list(c: PageContext, id: string): Promise<Response> {
    const list = await this.openList(c, id);
    if (list instanceof Response) return list;
    const connections = await this.options.store.list(list.principal);
    const rows = connections.map((connection) => this.row(id, connection)).join('');
    const body = connections.length
      ? '<table><thead><tr><th>Server</th><th>What</th><th>Since</th><th></th></tr></thead>' +
        `<tbody>${rows}</tbody></table>`
      : '<p>Nothing is connected.</p>';
    return htmlPage(c, 200, `Connections of ${list.principal}`, body);
  }

  /** POST /connections/revoke: one connection revoked, from the browser that opened the list; back to it. */
  async revoke(c: PageContext): Promise<Response> {
    const form = await c.req.parseBody();
    const id = typeof form.list === 'string' ? form.list : '';
    const list = await this.openList(c, id);
    if (list instanceof Response) return list;
    const server = typeof form.server === 'string' ? form.server : '';
    if (await this.options.store.delete(list.principal, server))
      this.options.log.info({ server }, 'a caller revoked a connection on the connections page');
    return redirect(`/connections/view/${id}`, { hash: list.binding });
  }

  /** One connection's row: what, since when, and its revoke button. */
  private row(list: string, { server, kind, connectedAt }: ConnectionSummary): string {
    const name = escapeHtml(this.options.displayName(server));
    const since = escapeHtml(connectedAt.slice(0, 16).replace('T', ' '));
    return (
      `<tr><td>${name}</td><td>${kind === 'oauth' ? 'account' : 'secrets'}</td><td>${since} UTC</td><td>` +
      `<form method="post" action="/connections/revoke"><input type="hidden" name="list" value="${escapeHtml(list)}">` +
      `<input type="hidden" name="server" value="${escapeHtml(server)}"><button type="submit">Revoke ${name}</button>` +
      '</form></td></tr>'
    );
  }

  private async openList(c: PageContext, id: string): Promise<OpenList | Response> {
    const list = id ? await this.options.store.peekPending<OpenList>(id) : undefined;
    if (list?.step !== 'connections-list') return linkUnusable(c);
    if (!this.browsers.matches(c.req.header('cookie'), list.binding))
      return textPage(c, 403, 'This list is not for this browser', OTHER_BROWSER);
    return list;
  }
}
