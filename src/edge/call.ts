// One MCP request at the edge, as the steps of app.ts fill it in: who the caller is (admit), what it asks
// (read), where it goes (route), what policy said (judge). One object per request, whose methods are the
// execute core both eras call: `request` sends a message where the route says, `view` shows the caller
// its answer. Kept as one object rather than closures so the hot path allocates little.
import type { CallerIdentity, RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { Grant } from '../../policy/allow-list.js';
import type { GuardrailSet } from '../../policy/guardrails/index.js';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../../policy/principal.js';
import type { Security } from '../../policy/security.js';
import { PLAIN_TARGET, type Target } from '../../policy/target.js';
import type { Aggregator } from '../aggregate/index.js';
import type { Log } from '../../infra/log.js';
import type { ForwardedCaller } from '../mrtr/index.js';
import type { ListenAccess, ListenHub } from '../notify/index.js';
import type { GatewayMetrics, RequestOutcome } from '../ops/index.js';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { textOf } from '../../protocol/exact-json.js';
import type { GuardrailRecorder, TaskStatusStep } from '../guardrails/index.js';
import type { LegacyClients } from '../legacy-client/index.js';
import type { NodeExchange } from './exchange.js';
import type { ToolHeaderIndex } from './param-headers.js';
import type { CallerLoad } from './caller-load.js';
import type { RequestTracker } from './request-tracker.js';
import type { RetryRouting } from './retry-routing.js';
import type { GatewayTracer, RequestSpan } from '../telemetry/index.js';
import { isListMethod, type Profile } from '../profiles/index.js';
import type { ToolIndex } from '../search/index.js';
import { discoverThroughView, listThroughView } from './views.js';
import { encodeHeaderValue } from '../../bridge/http/index.js';
import { forwardedParamHeaders } from './node-io.js';
import { mirroredHeaders } from './param-headers.js';
import { issueTaskIds, mayAnswerTask, type OpenedTask, sendTask, type TaskIdCodec } from '../tasks/index.js';

/** The index search mode reads, and whether it is filled yet. */
export interface SearchIndex {
  /** Undefined until the first search has loaded it (warm). */
  readonly index: ToolIndex | undefined;
  /**
   * Undefined once the index follows every server; before the first search it does not (a gateway nobody
   * searches reads no extra lists), and this starts it and resolves when it is filled or may wait no longer.
   */
  warm(): Promise<void> | undefined;
}

export interface Endpoint {
  upstream: Upstream;
  /** x-mcp-header declarations seen in this endpoint's tools/list answers. */
  toolHeaders: ToolHeaderIndex;
  /** A profile or search mode over /mcp (views.ts); its upstream is then the aggregator. */
  view?: Profile;
}

/** What every request of one edge shares: built once by createApp. */
export interface EdgeContext {
  upstreams: ReadonlyMap<string, Upstream>;
  /** /mcp, when served: its endpoint and the aggregator whose router places its requests. */
  aggregate: Endpoint | undefined;
  router: Aggregator['router'] | undefined;
  maxBodyBytes: number;
  contextKey: Buffer;
  listen: ListenHub;
  retries: RetryRouting | undefined;
  security: () => Security;
  metrics: GatewayMetrics | undefined;
  legacyClients: LegacyClients | undefined;
  tracker: RequestTracker;
  /** Set when the gateway traces: then each request gets a span (tracing.ts); undefined costs nothing more. */
  tracer?: GatewayTracer;
  log: Log;
  originAllowed(origin: string | undefined): boolean;
  principalContext(principal: Principal): string;
  /** The endpoint of a server as of now (a reload may add, replace or remove servers). */
  endpointOf(name: string): Endpoint | undefined;
  /** A profile's endpoint as of now ('' for /search/mcp); undefined when there is no such profile or no /mcp. */
  viewOf?(name: string): Endpoint | undefined;
  /** The tools search mode searches (every /mcp tool, by its /mcp name); undefined without /mcp. */
  search?: SearchIndex;
  /** Every MCP path, for refusals that list them. */
  paths(): string[];
  /** Requests and streams each caller holds (caller-load.ts); absent: uncapped. */
  load?: CallerLoad;
  /** Issues and opens the gateway's own task ids (src/tasks/). */
  tasks: TaskIdCodec;
}

/** src/guardrails/' face (guarded-call.ts), once a request under guardrails has loaded it. */
let guardrailsStep: typeof import('../guardrails/index.js') | undefined;
/** src/guardrails/task-status.ts, once a task listen under guardrails has heard of a task. */
let taskStatusStep: TaskStatusStep | undefined;

export class McpCall {
  /** What the metrics record of this request; each step that answers says how it ended. */
  method: string | undefined = undefined;
  outcome: RequestOutcome = 'rejected';
  cors: Record<string, string> | undefined = undefined;
  principal: Principal = ANONYMOUS_PRINCIPAL;
  grant: Grant | undefined = undefined;
  /** The caller another replica vouched for, when this is a forwarded retry. */
  vouched: ForwardedCaller | undefined = undefined;
  /** Who is asking, for the cache and the limiter (RequestOptions.authContext). */
  callerContext = '';
  /** Where the request goes, as the router placed it. */
  target: Target = PLAIN_TARGET;
  /** The upstream of /servers/<name>/mcp; undefined on /mcp and on views over it. */
  readonly server: string | undefined;
  /** Requests in flight keep the security they started with, whatever a reload installs meanwhile. */
  readonly security: Security;
  /**
   * A call the gateway makes on the caller's behalf (search mode's call_tool): it sends the tool's Mcp-Param-* headers.
   */
  onBehalf = false;
  /** This request's span, once its message is read, when the edge traces. */
  span: RequestSpan | undefined = undefined;
  /** Counted among its caller's requests in flight (EdgeContext.load): serve() counts it out. */
  counted = false;
  /** A Tasks method's task, once its id opened (src/tasks/task-step.ts). */
  task: OpenedTask | undefined = undefined;
  /** The /mcp name of the tool that created that task, once judged (guardrails choose rules by it). */
  taskTool: string | undefined = undefined;
  private callerIdentity: CallerIdentity | undefined = undefined;

  constructor(
    readonly edge: EdgeContext,
    readonly exchange: NodeExchange,
    readonly endpoint: Endpoint | undefined,
    readonly name: string,
    readonly started: number,
  ) {
    this.server =
      endpoint !== undefined && (endpoint === edge.aggregate || endpoint.view !== undefined) ? undefined : name;
    this.security = edge.security();
  }

  /**
   * Who is asking, for a server reached as each caller (RequestOptions.caller): the principal, and its
   * verified JWT for token exchange. Made on first use; a forwarded retry carries no token (its holder has it).
   */
  get caller(): CallerIdentity {
    if (this.callerIdentity === undefined) {
      const header =
        this.principal.via === 'jwt' && this.vouched === undefined
          ? this.exchange.incoming.headers.authorization
          : undefined;
      const token = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
      this.callerIdentity =
        token === undefined ? { principal: this.principal.id } : { principal: this.principal.id, token };
    }
    return this.callerIdentity;
  }

  /** The endpoint path the request came in on (what guardrails' `endpoints:` name). */
  get path(): string {
    return this.exchange.path;
  }

  /**
   * The execute core: the message to where the route says, under the upstream's own name; with guardrails
   * configured, through them (src/guardrails/, loaded on the first request that needs it).
   */
  request(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const guardrails = this.security.guardrails;
    return guardrails === undefined ? this.execute(message, options) : this.guarded(guardrails, message, options);
  }

  private async guarded(set: GuardrailSet, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    guardrailsStep ??= await import('../guardrails/index.js');
    const recorder = this.guardrailRecorder();
    return guardrailsStep.guardedRequest(set, this, recorder, message, options, (m, o) => this.execute(m, o));
  }

  /**
   * What a task status pushed on this caller's listen may show (src/tasks/task-listen.ts asks): judged by the
   * guardrails of the tool that created the task (src/guardrails/task-status.ts); without guardrails, `params`
   * as given, at once.
   */
  shownTaskStatus(server: string, tool: string | undefined, params: JsonObject): JsonObject | Promise<JsonObject> {
    const guardrails = this.security.guardrails;
    return guardrails === undefined ? params : this.judgedTaskStatus(guardrails, server, tool, params);
  }

  private async judgedTaskStatus(
    set: GuardrailSet,
    server: string,
    tool: string | undefined,
    params: JsonObject,
  ): Promise<JsonObject> {
    taskStatusStep ??= await (await import('../guardrails/index.js')).loadTaskStatus();
    return taskStatusStep.judgedTaskStatus(set, this, this.guardrailRecorder(), server, tool, params);
  }

  private guardrailRecorder(): GuardrailRecorder {
    const metrics = this.edge.metrics;
    return {
      audit: this.security.audit,
      decision: (rule, action, stage) => metrics?.guardrailDecision(rule, action, stage),
      webhook: (rule, hook, outcome) => metrics?.guardrailWebhook(rule, hook, outcome),
    };
  }

  private execute(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    if (this.span !== undefined) options.trace = this.span;
    if (this.task !== undefined) return sendTask(this, message, options);
    if (!mayAnswerTask(message)) return this.send(message, options);
    // Read before the call: on /mcp the router restores the server's own name in place.
    const target = this.target;
    const listed = target.kind === 'tools' ? target.listed : undefined;
    const tool = this.server === undefined ? listed?.name : message.params?.name;
    return issueTaskIds(this, this.server ?? listed?.server, tool, this.send(message, options));
  }

  private send(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const view = this.endpoint?.view;
    if (view !== undefined && isListMethod(message.method)) return listThroughView(this, view, message, options);
    if (view !== undefined && message.method === 'server/discover')
      return discoverThroughView(this, view, message, options);
    const target = this.target;
    if (this.server === undefined && this.edge.router && target.kind !== 'none')
      return this.edge.router.call(target, message, options);
    // The server's upstream as of now: a reload may have replaced it while this request was admitted and read.
    const endpoint = this.server === undefined ? this.endpoint! : (this.edge.endpointOf(this.server) ?? this.endpoint!);
    return endpoint.upstream.request(message, options);
  }

  /** The answer as this caller may see it: tool headers learned from lists, then lists filtered by policy. */
  view(method: string, response: JsonRpcResponse): JsonRpcResponse {
    if (method === 'tools/list' && 'result' in response) this.endpoint!.toolHeaders.learn(response.result);
    // A view's lists were shaped page by page as they were read (views.ts).
    if (this.endpoint!.view !== undefined && isListMethod(method)) return response;
    const guard = this.security.guard;
    return guard && this.grant ? guard.shape(this.server, method, response, this.grant) : response;
  }

  /**
   * The Mcp-Param-* headers a tools/call carries upstream: the client's, or on a call made on its behalf
   * those the placed tool's definition mirrors its arguments into.
   */
  paramHeaders(message: JsonRpcRequest): Record<string, string> | undefined {
    if (message.method !== 'tools/call') return undefined;
    if (!this.onBehalf) return forwardedParamHeaders(this.exchange.incoming.rawHeaders);
    const definition = this.target.kind === 'tools' ? this.target.listed?.definition : undefined;
    return definition && mirroredHeaders(definition.inputSchema, message.params?.arguments, encodeHeaderValue);
  }

  /** What respond.ts shows of a modern answer; being called at all means the client waited for it. */
  shape(response: JsonRpcResponse): JsonRpcResponse {
    this.outcome = 'error' in response ? 'error' : 'ok';
    if (this.span !== undefined) markAnswer(this, response);
    return this.view(this.method!, response);
  }
}

/**
 * What the caller was answered: an error marks the span failed with its JSON-RPC code. Here with McpCall, whose
 * `shape` calls it, rather than in request-span.ts: that module takes the call, so the call cannot take it back.
 */
export function markAnswer(call: McpCall, response: JsonRpcResponse): void {
  if (!('error' in response)) return;
  const code = textOf(response.error.code); // an upstream's code may be a number kept as written
  call.span!.setAttribute('rpc.response.status_code', code);
  call.span!.fail(code, response.error.message);
}

/**
 * What a listen stream (modern or a 2025 session's) may tell this caller of, when a policy or a profile
 * limits it. On a profile, only changes in lists where it may show something of that upstream: a curated
 * view must not tell its callers when what it hides changes.
 */
export function listenAccess(call: McpCall): ListenAccess | undefined {
  const { grant } = call;
  const view = call.endpoint?.view;
  if (grant === undefined && view === undefined) return undefined;
  const router = call.edge.router;
  return {
    reaches: (upstream) => grant === undefined || grant.reaches(upstream),
    // A view exists only over /mcp, so with a router; without one nothing is hidden by name.
    hears: (upstream, kind) =>
      view === undefined || router === undefined || view.shownOfHead(router.headOf(upstream))[kind],
    reads: (uri, upstream) =>
      (view === undefined || view.showsUri(uri)) &&
      (grant === undefined || grant.allows('resources', upstream, uri).allowed),
  };
}
