// The judge step: policy on the target the router placed (policy/guard.ts decides; this step fetches what
// the guard says it needs, then asks again), and the answer when it refuses. Without policies everyone
// authenticated may go ahead, and only a /mcp name nobody listed yet has the lists read again.
import { eachListPage } from '../../bridge/list-pages.js';
import { AUTHENTICATED, isNeed, type Need, type Verdict } from '../../policy/guard.js';
import { nonCanonicalUri } from '../../policy/guardrails/index.js';
import { type ListReader, placed } from '../aggregate/index.js';
import { httpStatusOf } from '../../protocol/error-status.js';
import { ErrorCode, errorResponse, isObject, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';
import { uncachedOf } from '../layers/index.js';
import { argsOf, record } from './audit-step.js';
import type { McpCall } from './call.js';
import { writeJson } from './exchange.js';
import { traceIdOf } from './trace-id.js';

/** Synchronous when nothing needs reading (no policies, a placed target): the common call takes no extra turn. */
export function judge(call: McpCall, message: JsonRpcRequest): Verdict | Promise<Verdict> {
  const spelled = URI_METHODS.has(message.method) ? nonCanonical(message) : undefined;
  if (spelled !== undefined) return spelled;
  const { guard } = call.security;
  const { grant, edge } = call;
  if (guard && grant) {
    const outcome = guard.judge(call.target, message, grant, call.principal);
    return isNeed(outcome) ? judgeWhatWasNeeded(call, message, outcome) : outcome;
  }
  if (call.server === undefined && edge.router && !placed(call.target)) return confirmed(call);
  return AUTHENTICATED;
}

/** The methods that name resources by URI, whose URIs must be canonical before any rule reads them. */
const URI_METHODS: ReadonlySet<string> = new Set([
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
  'completion/complete',
]);

/** The URIs a request names: its `uri`, a listen's resourceSubscriptions, a completion's resource ref. */
function urisOf(message: JsonRpcRequest): unknown[] {
  const params = message.params;
  if (params === undefined) return [];
  if (message.method === 'subscriptions/listen') {
    const asked = isObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
    return Array.isArray(asked) ? asked : [];
  }
  if (message.method === 'completion/complete') return isObject(params.ref) ? [params.ref.uri] : [];
  return [params.uri];
}

/**
 * A URI in another spelling than its canonical one is refused, naming that one (policy/guardrails/canonical-uri.ts):
 * deny rules and globs read the string, servers normalise it, so the two must agree before either acts.
 */
function nonCanonical(message: JsonRpcRequest): Verdict | undefined {
  for (const uri of urisOf(message)) {
    const canonical = typeof uri === 'string' ? nonCanonicalUri(uri) : undefined;
    if (canonical === undefined) continue;
    return {
      allowed: false,
      rule: 'URI not in canonical form',
      target: uri as string,
      refusal: errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Resource URI ${JSON.stringify(uri)} is not in canonical form (a lower-case scheme, no "." or ".." ` +
          `segments); ask for ${JSON.stringify(canonical)}`,
        { uri, canonical },
      ),
    };
  }
  return undefined;
}

async function confirmed(call: McpCall): Promise<Verdict> {
  call.target = await call.edge.router!.confirm(call.target, listReader(call));
  return AUTHENTICATED;
}

/** The caller as the router reads a list for them (a server reached as each caller lists only to them). */
function listReader(call: McpCall): ListReader {
  return { authContext: call.callerContext, caller: call.caller, reach: call.grant };
}

/**
 * The guard could not decide at once: fetch what it asked for (lists read again, a tool's definition) and ask again.
 */
async function judgeWhatWasNeeded(call: McpCall, message: JsonRpcRequest, first: Need): Promise<Verdict> {
  const guard = call.security.guard!;
  const grant = call.grant!;
  const edge = call.edge;
  let outcome: Verdict | Need = first;
  if (outcome.need === 'routes') {
    // The guard asks for this only where timing must not tell: a name policy allows but no list showed yet,
    // or on /mcp a URI whose listed owner refuses it (so a denied URI that exists costs the same re-reading
    // as one nobody lists). A name policy denies is refused at once, whether or not it exists.
    const target = call.target;
    call.target = edge.router
      ? await edge.router.confirm(target, listReader(call))
      : target.kind === 'none'
        ? target
        : { ...target, confirmed: true };
    outcome = guard.judge(call.target, message, grant, call.principal);
  }
  if (isNeed(outcome) && call.target.kind === 'tools' && call.target.listed) {
    // A pinned tool whose definition was last read from its server longer ago than pinsMaxAgeMs (or never):
    // read the server's tools again, past the list cache, so one changed without list_changed is caught.
    const server = call.target.listed.server;
    const upstream = edge.upstreams.get(server);
    if (upstream) {
      const { tools, readAt } = await toolsNow(upstream, call.callerContext, call.caller);
      guard.definitionsRead(server, tools, grant, readAt);
    }
    outcome = guard.judge(call.target, message, grant, call.principal, true);
  }
  // Never so: with the routes confirmed and `listed` set the guard decides; a mistake there refuses rather than serves.
  return isNeed(outcome)
    ? {
        allowed: false,
        rule: 'the guard could not decide',
        refusal: errorResponse(
          message.id,
          ErrorCode.InternalError,
          'Internal error in mcp-gateway; see the gateway log',
        ),
      }
    : outcome;
}

/** Reads of a server's tools in flight, by upstream then caller context: concurrent calls share one. */
const reading = new WeakMap<Upstream, Map<string, Promise<ToolsRead>>>();

interface ToolsRead {
  tools: unknown[];
  /** When the read began: what it gave is at least this recent. */
  readAt: number;
}

/** The tools the server lists now, every page, the cache in front of it skipped; those read before an error. */
function toolsNow(
  upstream: Upstream,
  context: string | undefined,
  caller: RequestOptions['caller'],
): Promise<ToolsRead> {
  let byContext = reading.get(upstream);
  if (!byContext) reading.set(upstream, (byContext = new Map()));
  const key = context ?? '';
  let read = byContext.get(key);
  if (!read) {
    const source = uncachedOf(upstream);
    const done = { tools: [] as unknown[], readAt: Date.now() };
    read = eachListPage(source, 'tools/list', ownRequestMeta(), { authContext: context, caller }, (page) => {
      if (Array.isArray(page.result.tools)) done.tools.push(...page.result.tools);
    })
      .catch(() => undefined)
      .then(() => done)
      .finally(() => byContext.delete(key));
    byContext.set(key, read);
  }
  return read;
}

/** Answers a refused request (policy's own words), and leaves its trace in audit and metrics. */
export function refuse(
  call: McpCall,
  message: JsonRpcRequest,
  verdict: Verdict & { refusal: NonNullable<Verdict['refusal']> },
): Response {
  record(call, call.principal, message.method, verdict, argsOf(message), traceIdOf(message.params?._meta));
  call.outcome = 'denied';
  call.edge.metrics?.denied(call.server ?? call.name, message.method);
  return writeJson(call.exchange.outgoing, httpStatusOf(verdict.refusal), verdict.refusal, call.cors);
}
