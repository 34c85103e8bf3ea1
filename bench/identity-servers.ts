// The far side of bench/identity-load.ts: an authorization server that only refreshes (rotating refresh tokens,
// short-lived opaque access tokens) and counts every refresh per principal and server, and an MCP server over
// HTTP whose `whoami` names the principal an access token was issued to. Opaque tokens rather than JWTs: the
// bench asks "whose token was this", which a table answers without signatures. A refresh token spent twice is
// refused (invalid_grant) and counted: two replicas refreshing the same token at once would show here.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';

export interface Grant {
  principal: string;
  server: string;
  /** Epoch ms the access token stops being accepted. */
  expiresAt: number;
}

export interface IdentityServers {
  issuer: string;
  tokenEndpoint: string;
  /** The MCP endpoint of the OAuth server (crm). */
  mcpUrl: string;
  /** A fresh access and refresh token for (principal, server), as a connect would have left them. */
  issue(principal: string, server: string): { accessToken: string; refreshToken: string; expiresAt: number };
  /** Whose access token this is (any ever issued, expired or not). */
  owner(accessToken: string): Grant | undefined;
  /** Refresh grants answered, per `${principal} ${server}`. */
  refreshes: Map<string, number>;
  /** Refresh tokens presented a second time (refused). */
  reusedRefreshTokens: number;
  /** Calls crm refused for an unknown or expired token. */
  refusedCalls: number;
  close(): Promise<void>;
}

const token = (kind: string) => `${kind}-${randomBytes(12).toString('hex')}`;

export async function startIdentityServers(lifetimeMs: number): Promise<IdentityServers> {
  const accessTokens = new Map<string, Grant>();
  const refreshTokens = new Map<string, { principal: string; server: string; spent: boolean }>();
  const state = { base: '', reused: 0, refused: 0 };
  const refreshes = new Map<string, number>();

  const issue = (principal: string, server: string) => {
    const accessToken = token('at');
    const refreshToken = token('rt');
    const expiresAt = Date.now() + lifetimeMs;
    accessTokens.set(accessToken, { principal, server, expiresAt });
    refreshTokens.set(refreshToken, { principal, server, spent: false });
    return { accessToken, refreshToken, expiresAt };
  };

  const refresh = async (request: Request): Promise<Response> => {
    const form = new URLSearchParams(await request.text());
    const held = refreshTokens.get(form.get('refresh_token') ?? '');
    if (form.get('grant_type') !== 'refresh_token' || held === undefined || held.spent) {
      if (held?.spent) state.reused++;
      return Response.json({ error: 'invalid_grant' }, { status: 400 });
    }
    held.spent = true;
    const key = `${held.principal} ${held.server}`;
    refreshes.set(key, (refreshes.get(key) ?? 0) + 1);
    const next = issue(held.principal, held.server);
    return Response.json({
      access_token: next.accessToken,
      refresh_token: next.refreshToken,
      token_type: 'Bearer',
      expires_in: lifetimeMs / 1000,
      scope: 'read',
    });
  };

  const mcp = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'identity-bench-crm', version: '1.0.0' });
      server.registerTool(
        'whoami',
        { description: 'Names the principal its token was issued to' },
        async (context) => ({
          content: [{ type: 'text' as const, text: `you are ${String(context.http?.authInfo?.extra?.principal)}` }],
        }),
      );
      return server;
    },
    { legacy: 'reject' },
  );

  const fetch = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    const issuer = state.base;
    if (pathname === '/.well-known/oauth-authorization-server' || pathname === '/.well-known/openid-configuration')
      return Response.json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      });
    if (pathname === '/.well-known/oauth-protected-resource/mcp')
      return Response.json({ resource: `${issuer}/mcp`, authorization_servers: [issuer], scopes_supported: ['read'] });
    if (pathname === '/token' && request.method === 'POST') return refresh(request);
    const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? '';
    const grant = accessTokens.get(bearer);
    if (grant === undefined || grant.server !== 'crm' || grant.expiresAt <= Date.now()) {
      state.refused++;
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' } }), {
        status: 401,
        headers: {
          'content-type': 'application/json',
          'www-authenticate': `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp"`,
        },
      });
    }
    return mcp.fetch(request, {
      authInfo: { token: bearer, clientId: 'gw', scopes: [], extra: { principal: grant.principal } },
    } as never);
  };

  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server)) as Server;
  });
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: state.base,
    tokenEndpoint: `${state.base}/token`,
    mcpUrl: `${state.base}/mcp`,
    issue,
    owner: (accessToken) => accessTokens.get(accessToken),
    refreshes,
    get reusedRefreshTokens() {
      return state.reused;
    },
    get refusedCalls() {
      return state.refused;
    },
    async close() {
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
