// The one interface every upstream kind implements; the edge and router speak only this.
import type { EventEmitter } from 'node:events';
import type { CancelSignal } from '../protocol/cancel.js';
import type {
  JsonObject,
  JsonRpcErrorObject,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonrpc.js';
import type { RequestTrace } from '../protocol/request-trace.js';

export type UpstreamState = 'starting' | 'ready' | 'backing-off' | 'unhealthy' | 'stopped';
export type Era = 'modern' | 'legacy';

export interface RequestOptions {
  /** Aborting cancels the request upstream; the returned promise then settles with an error. */
  signal?: CancelSignal;
  /**
   * Called once when the upstream has begun to answer as a stream (a stdio child: when the request is
   * written; an HTTP upstream: when its SSE answer opens). Until then the caller may still pick the HTTP
   * status of its own answer; an upstream that never calls it leaves the choice open until the response.
   */
  onStreamStart?: () => void;
  /** Notifications that belong to this request (progress), already translated back to the caller's ids. */
  onNotification?: (notification: JsonRpcNotification) => void;
  /**
   * Headers from the client that an HTTP upstream must see too (`Mcp-Param-*`, lower-cased names).
   * A stdio upstream ignores them.
   */
  forwardHeaders?: Readonly<Record<string, string>>;
  /**
   * Who is asking, as an opaque token: a cache in front of the upstream keeps `private` answers apart by
   * it, and the limiter in front of it queues callers round robin by it. Upstreams themselves ignore it.
   */
  authContext?: string;
  /**
   * The trace this request belongs to (32 hex digits), as the edge knows it: the gateway's metrics attach
   * it to the upstream's duration as an exemplar. Upstreams themselves ignore it.
   */
  traceId?: string;
  /**
   * Which upstreams the caller may reach, when a policy limits it: an aggregate of upstreams leaves the
   * others out of its fan-out and routing. A single upstream ignores it.
   */
  reach?: Reach;
  /**
   * Answers a 2025-era server's own request (`elicitation/create`, `sampling/createMessage`, `roots/list`)
   * made while it serves this request. Without it such requests are refused.
   */
  onServerRequest?: ServerRequestHandler;
  /** The request's span, when the gateway traces: layers record events on it, and each upstream call a span. */
  trace?: RequestTrace;
  /**
   * The W3C trace context handed on so the server's spans join the trace (src/layers/propagating-upstream.ts
   * sets it): an HTTP upstream sends it as the traceparent and tracestate headers, a stdio upstream writes it
   * into params._meta while it serialises the request (bridge/trace-meta.ts), leaving the caller's message as it came.
   */
  traceparent?: string;
  tracestate?: string;
  /**
   * Who is asking, for the layer that holds callers' own credentials for a server (src/credentials/). Carried
   * like authContext; upstreams never read it.
   */
  caller?: CallerIdentity;
  /**
   * The Authorization header value this one request goes out with: the caller's own credential for this
   * server, put here by src/credentials/. An HTTP upstream sends it (its configured headers hold none then);
   * a stdio upstream ignores it.
   */
  authorization?: string;
}

/** A caller as the edge authenticated them: opaque to the bridge, read only by the credentials layer. */
export interface CallerIdentity {
  readonly principal: string;
  /** The caller's verified bearer token (a JWT from auth.jwt), for token exchange; absent for API keys. */
  readonly token?: string;
}

/** Settles with the result, or the error, to send back to the server that asked. */
export type ServerRequestHandler = (request: {
  method: string;
  params: JsonObject | undefined;
}) => Promise<{ result: JsonObject } | { error: JsonRpcErrorObject }>;

export interface Reach {
  /** The same for every caller who reaches the same upstreams: merged answers are kept apart by it. */
  readonly key: string;
  reaches(server: string): boolean;
  /** Whether the caller may see everything the server offers (then its instructions may reach it). */
  seesAll(server: string): boolean;
}

export interface UpstreamStatus {
  state: UpstreamState;
  era: Era | undefined;
  restarts: number;
  lastError: string | undefined;
  /** A pool of children (bridge/pool/): each child's own status, by index. Absent for a single connection. */
  children?: readonly ChildStatus[];
}

/** One child of a pool: its own state, restarts and last error, and the requests it is serving now. */
export interface ChildStatus extends Omit<UpstreamStatus, 'children'> {
  inFlight: number;
}

export interface Upstream {
  readonly name: string;
  /**
   * Sends one modern request and settles with its response, carrying the caller's own id. Never rejects:
   * timeouts, crashes and cancellation arrive as JSON-RPC errors that say what happened.
   * The message object is borrowed: the upstream may rewrite its id and progress token while in flight.
   */
  request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse>;
  status(): UpstreamStatus;
  /** Emits 'state' (UpstreamState) and 'listChanged' (notification method). */
  readonly events: EventEmitter;
  start(): Promise<void>;
  close(): Promise<void>;
  /**
   * For an upstream whose offer is read from a source of its own (an OpenAPI document): read it again, as a
   * config reload asks of a server whose settings did not change. A change is announced as 'listChanged'.
   */
  reread?(): Promise<void>;
  /**
   * Why a tool of this name is known but not offered (an OpenAPI operation the origin rule refused), so that a
   * call of it is told why rather than "unknown"; undefined for a name it knows nothing of.
   */
  whyNotOffered?(tool: string): string | undefined;
}
