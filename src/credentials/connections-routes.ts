// A caller's own connections, with their usual credentials (an MCP client, a script): GET /connections lists
// theirs (kind and dates, never a token or a value), DELETE /connections/<server> revokes one (a per-caller
// child holding it is stopped; every replica hears of it). Served once, by whichever pages are mounted first.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { CredentialStore } from './store.js';

const NO_STORE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

export function addConnectionRoutes(
  app: Hono<{ Bindings: HttpBindings }>,
  store: CredentialStore,
  authenticate: (authorization: string | undefined) => Promise<string | undefined>,
): void {
  app.get('/connections', async (c) => {
    const principal = await authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to see your connections' }, 401);
    return c.json({ principal, connections: await store.list(principal) }, 200, NO_STORE);
  });

  app.delete('/connections/:server', async (c) => {
    const principal = await authenticate(c.req.header('authorization'));
    if (principal === undefined)
      return c.json({ error: 'send your usual credentials (Authorization) to revoke a connection' }, 401);
    const removed = await store.delete(principal, c.req.param('server'));
    return c.json({ removed }, removed ? 200 : 404, NO_STORE);
  });
}
