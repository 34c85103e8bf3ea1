// What an operator asks of the gateway over HTTP: /healthz, /readyz, /metrics, the status page at / and
// its data at /status.json. Health answers anyone (load balancers and orchestrators probe it), but with
// authentication on only operators learn which servers are not ready; the rest shows who was denied what
// and every server's tools, so with authentication on it is for the principals auth.operators names, and
// for nobody until it names some.
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import { liveness, readiness, STATUS_PAGE_CSP, type UpstreamHealth, wantsOpenMetrics } from '../ops/index.js';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import type { Principal } from '../../policy/principal.js';
import type { Security } from '../../policy/security.js';
import { authRefusal, metadataUrlFor } from './access.js';
import { reject } from './rejection.js';

export interface OpsOptions {
  startedAt: number;
  /** Browser Origins allowed (as for MCP); pages are refused to others. */
  originAllowed(origin: string | undefined): boolean;
  /**
   * Principals allowed to read operator pages (with authentication on); nobody when undefined. As of now: a reload may
   * change it.
   */
  operators(): Operators | undefined;
  upstreams(): Iterable<UpstreamHealth>;
  draining(): boolean;
  security(): Security;
  /** The status page's data. */
  snapshot(): Promise<object>;
  page?(snapshot: object): string;
  /** GET /config: the config in force with its secrets redacted, and which load it came from. */
  config?(): object;
  metrics?: {
    contentType: string;
    render(): Promise<string>;
    openMetricsContentType: string;
    renderOpenMetrics(): Promise<string>;
  };
}

type App = Hono<{ Bindings: HttpBindings }>;
export interface Operators {
  ids: readonly string[];
  groups: readonly string[];
}

/** Whether a principal is among auth.operators (never the anonymous one; nobody when none are named). */
export function isOperator(principal: Principal, operators: Operators | undefined): boolean {
  if (principal.via === 'anonymous' || !operators) return false;
  return operators.ids.includes(principal.id) || principal.groups.some((g) => operators.groups.includes(g));
}

/**
 * Whether this caller may be told details that map the gateway (server names, which are not ready): anyone
 * without authentication (a loopback gateway), operators with it. Never refuses: a probe just learns less.
 */
export async function seesDetails(
  security: Security,
  operators: Operators | undefined,
  authorization: string | undefined,
): Promise<boolean> {
  if (!security.authenticator.enabled) return true;
  if (authorization === undefined) return false;
  const outcome = await security.authenticator.authenticate(authorization);
  return outcome.ok && isOperator(outcome.principal, operators);
}

/** A probe's answer: /healthz or /readyz, the same whether Hono or the Node path (app.ts) serves it. */
export interface ProbeAnswer {
  status: 200 | 503;
  body: object;
}

export const PROBE_HEADERS = { 'cache-control': 'no-store' };

export function probe(
  ops: OpsOptions,
  path: '/healthz' | '/readyz',
  authorization: string | undefined,
): ProbeAnswer | Promise<ProbeAnswer> {
  if (path === '/healthz') return { status: 200, body: liveness(ops.startedAt) };
  const { ready, body } = readiness(ops.upstreams(), ops.draining());
  const status = ready ? 200 : 503;
  return seesDetails(ops.security(), ops.operators(), authorization).then((details) => ({
    status,
    body: details ? body : { status: ops.draining() ? 'draining' : ready ? 'ready' : 'not ready' },
  }));
}

/** The probe paths, served on both the Hono and the Node path (deploy files point their health checks here). */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const;

export function addOpsRoutes(app: App, ops: OpsOptions): void {
  for (const path of PROBE_PATHS) {
    app.get(path, async (c) => {
      const { status, body } = await probe(ops, path, c.env.incoming.headers.authorization);
      return c.json(body, status, PROBE_HEADERS);
    });
  }
  app.get(
    '/status.json',
    async (c) => (await refused(c, ops)) ?? c.json(await ops.snapshot(), 200, { 'cache-control': 'no-store' }),
  );
  app.get('/', async (c) => {
    const refusal = await refused(c, ops);
    if (refusal) return refusal;
    if (!ops.page) return c.json(await ops.snapshot());
    return c.html(ops.page(await ops.snapshot()), 200, {
      'cache-control': 'no-store',
      'content-security-policy': `${STATUS_PAGE_CSP}; frame-ancestors 'none'`,
    });
  });
  app.get('/config', async (c) => {
    const refusal = await refused(c, ops);
    if (refusal) return refusal;
    if (!ops.config) return c.json(reject(404, null, ErrorCode.InvalidRequest, 'no config to show').body, 404);
    return c.json(ops.config(), 200, { 'cache-control': 'no-store' });
  });
  app.get('/metrics', async (c) => {
    const refusal = await refused(c, ops);
    if (refusal) return refusal;
    if (!ops.metrics) return c.json(reject(404, null, ErrorCode.InvalidRequest, 'metrics are off').body, 404);
    // OpenMetrics (which carries exemplars) for a scraper that asks for it, the classic text otherwise.
    const metrics = ops.metrics;
    if (wantsOpenMetrics(c.env.incoming.headers.accept)) {
      return c.body(await metrics.renderOpenMetrics(), 200, {
        'content-type': metrics.openMetricsContentType,
        'cache-control': 'no-store',
        vary: 'accept',
      });
    }
    return c.body(await metrics.render(), 200, {
      'content-type': metrics.contentType,
      'cache-control': 'no-store',
      vary: 'accept',
    });
  });
}

/**
 * The refusal for a caller who may not see operator pages (they name servers, principals and rules), or
 * undefined when it may: a browser from another Origin never; with authentication on, only a principal
 * that auth.operators names (nobody until it names someone).
 */
async function refused(c: Context<{ Bindings: HttpBindings }>, ops: OpsOptions): Promise<Response | undefined> {
  const headers = c.env.incoming.headers;
  if (!ops.originAllowed(headers.origin)) {
    return c.json(
      reject(
        403,
        null,
        ErrorCode.InvalidRequest,
        'Operator pages answer only their own origin: open them at the address the gateway listens on',
      ).body,
      403,
    );
  }
  const security = ops.security();
  if (!security.authenticator.enabled) return undefined;
  const outcome = await security.authenticator.authenticate(headers.authorization);
  if (!outcome.ok) {
    const refusal = authRefusal(security, outcome, metadataUrlFor(security, headers, c.req.path));
    return c.json(refusal.body, refusal.status, refusal.headers);
  }
  const principal = outcome.principal;
  const operators = ops.operators();
  if (isOperator(principal, operators)) return undefined;
  const why = !operators
    ? 'none are named yet; list principals or groups in auth.operators to open these pages'
    : principal.via === 'anonymous'
      ? "send an operator's credentials"
      : `${principal.id} is not among auth.operators`;
  return c.json(reject(403, null, ErrorCode.InvalidRequest, `Operator pages are for operators: ${why}`).body, 403);
}
