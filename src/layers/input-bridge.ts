// Multi round-trip requests across eras. In front of each upstream: a modern server's input_required and
// requestState pass through untouched (never opened, logged or stored). A 2025 server instead asks its
// client mid-call (elicitation/create, sampling/createMessage, roots/list), which a stateless client can
// no longer answer; the gateway holds that call open, answers the client input_required with the
// question and a requestState of its own, and carries the client's retry back to the waiting server.
// This is the 2025 adapter for input, and it lives with the other layers rather than in bridge/legacy/
// because it needs the held calls (src/mrtr/: the requestState codec, the calls replicas forward retries to,
// which import no layer). So it is the one module outside bridge/ that asks a server's era, once, as its entry
// condition (request(), below).
import type { Era, RequestOptions, Upstream } from '../../bridge/upstream.js';
import { UpstreamWrapper } from './upstream-wrapper.js';
import { cancelledResponse } from '../../protocol/cancel.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { declaredCapabilities, MAY_ASK, META } from '../../protocol/mcp.js';
import { traceFields } from '../../protocol/request-trace.js';
import { type CallEvent, HeldCall, type HeldCalls, requestDigest } from '../mrtr/index.js';

export interface InputBridgeOptions {
  held: HeldCalls;
  /** roots/list answered from the config instead of asking the client. */
  roots: readonly JsonObject[] | undefined;
  /**
   * The connection says which call a server's question belongs to (HTTP: the question arrives on the call's
   * own stream). On stdio it does not: a question while another asking call is in flight cannot be placed.
   */
  placesQuestions: boolean;
  log: Log;
}

/** Which client capability each question needs. */
const CAPABILITY: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};
/** Longest a retry waits for a just-started server's era to be known. */
const ERA_WAIT_MS = 30_000;

/** Resolves with the upstream's era once it is known (it became ready), or after `ms` with what it is then. */
function eraKnown(upstream: Upstream, ms: number): Promise<Era | undefined> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (upstream.status().era === undefined) return;
      done();
    };
    const done = (): void => {
      clearTimeout(timer);
      upstream.events.off('state', check);
      resolve(upstream.status().era);
    };
    const timer = setTimeout(done, ms);
    upstream.events.on('state', check);
    check();
  });
}

export class InputBridge extends UpstreamWrapper {
  /** Calls waiting for this server's held calls to end (stdio only): woken when none is held. */
  private waiting: (() => void)[] = [];

  constructor(
    inner: Upstream,
    private readonly options: InputBridgeOptions,
  ) {
    super(inner);
  }

  override close(): Promise<void> {
    for (const [id, call] of this.options.held.calls) {
      if (call.upstream !== this.inner) continue;
      call.cancel();
      this.options.held.calls.delete(id);
    }
    return this.inner.close();
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    // The entry condition: only a 2025 server needs the bridge; until its era is known, a request may still
    // meet one. A 2026 server's input_required and requestState pass through untouched (no async frame here).
    const era = MAY_ASK.has(message.method) ? this.inner.status().era : 'modern';
    return era === 'modern' ? this.inner.request(message, options) : this.bridged(message, era, options);
  }

  private async bridged(
    message: JsonRpcRequest,
    era: 'legacy' | undefined,
    options: RequestOptions,
  ): Promise<JsonRpcResponse> {
    const params = message.params;
    if (params && typeof params.requestState === 'string') {
      // Whose requestState it is depends on the era: wait for the server to say which it speaks.
      const known = era ?? (await eraKnown(this.inner, ERA_WAIT_MS));
      return known === 'legacy' ? this.resume(message, params, options) : this.inner.request(message, options);
    }
    if (params && 'inputResponses' in params) {
      return Promise.resolve(
        errorResponse(
          message.id,
          ErrorCode.InvalidParams,
          'inputResponses without the requestState of the input_required answer; retry with both, as they came',
        ),
      );
    }
    options.onStreamStart?.(); // a held call's rounds answer as they always did: the stream opens at once
    // On stdio a question can be placed only while its call is the one asking call in flight: a new call
    // waits (bounded) behind one held for its client, rather than fail the moment its server asks.
    const caller = options.authContext ?? '';
    if (!this.options.placesQuestions && this.heldHere(caller).length > 0)
      await this.behindHeld(caller, options.signal);
    if (options.signal?.aborted) return cancelledResponse(message.id);
    const call = new HeldCall(this.inner, message, options);
    // A held call whose server call ends (the child crashed, say) holds nobody up any more.
    if (!this.options.placesQuestions) call.onFinished = () => this.released();
    return this.round(call, message, options);
  }

  /**
   * Other callers' interactive calls on this server: held for their client's retry, or resumed and still
   * running (it may ask again). While one is in flight, a question from the server cannot be placed. A
   * caller's own calls are not counted: what it holds up is its own business.
   */
  private heldHere(caller: string): HeldCall[] {
    const here: HeldCall[] = [];
    for (const call of this.options.held.calls.values())
      if (call.upstream === this.inner && !call.finished && call.caller !== caller) here.push(call);
    return here;
  }

  /**
   * Waits until no call is held on this server, at most mrtr.queueMs; then the calls still held (their
   * clients have not answered in all that time) are cancelled, so one unanswered question delays the
   * server's other callers by queueMs at most, instead of failing their questions for mrtr.holdMs.
   */
  private async behindHeld(caller: string, signal: RequestOptions['signal']): Promise<void> {
    const { held, log } = this.options;
    const deadline = Date.now() + held.queueMs;
    while (!signal?.aborted && Date.now() < deadline && this.heldHere(caller).length > 0) {
      let wake: () => void = () => {};
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.waiting.push(wake);
      const timer = setTimeout(wake, deadline - Date.now());
      signal?.addEventListener('abort', wake, { once: true });
      try {
        await woken;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        this.waiting = this.waiting.filter((w) => w !== wake);
      }
    }
    if (signal?.aborted) return;
    // Only calls still waiting for their client are cancelled: one resumed is running, and ends on its own.
    for (const call of this.heldHere(caller)) {
      if (!call.asked) continue;
      log.info(
        { server: this.name, queueMs: held.queueMs },
        'cancelled a held call another caller waited behind for mrtr.queueMs',
      );
      call.cancel();
      held.calls.delete(call.id);
    }
  }

  /** A call here ended (answered, cancelled, expired): the waiting look again. */
  private released(): void {
    for (const wake of this.waiting) wake();
  }

  /** Waits for the call's next event and answers this client round with it. */
  private async round(call: HeldCall, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const meta = isObject(message.params?._meta) ? message.params._meta : {};
    const capabilities: JsonObject = declaredCapabilities(message) ?? {};
    for (;;) {
      const event: CallEvent | undefined = await call.next(options.signal, options.onNotification, meta.progressToken);
      if (!event) {
        this.options.held.calls.delete(call.id);
        this.released();
        return cancelledResponse(message.id);
      }
      if (event.kind === 'answer') {
        this.options.held.calls.delete(call.id);
        this.released();
        // Answered within the first round, the response already carries this id and goes as it came.
        return event.response.id === message.id
          ? event.response
          : ({ ...event.response, id: message.id } as JsonRpcResponse);
      }
      if (event.method === 'roots/list' && this.options.roots) {
        event.respond({ result: { roots: [...this.options.roots] } });
        continue;
      }
      const needed = CAPABILITY[event.method]!;
      if (!(needed in capabilities) && event.method === 'roots/list') {
        // Servers also ask for roots on their own (after initialize, say), and on stdio that cannot be told
        // apart from a question of this call: answer as a client without roots would, and go on.
        event.respond({
          error: { code: ErrorCode.MethodNotFound, message: 'The client did not declare the roots capability' },
        });
        continue;
      }
      if (!(needed in capabilities)) {
        event.respond({
          error: { code: ErrorCode.MethodNotFound, message: `The client did not declare the ${needed} capability` },
        });
        call.cancel();
        this.options.held.calls.delete(call.id);
        return errorResponse(
          message.id,
          ErrorCode.MissingRequiredClientCapability,
          `${this.name} asks the client for ${event.method} while serving ${message.method}; declare the ${needed} ` +
            `capability in _meta["${META.clientCapabilities}"] to answer it`,
          { requiredCapabilities: { [needed]: {} } },
        );
      }
      return this.suspend(call, event, message, options);
    }
  }

  /** Keeps the call for the retry and answers the client input_required. */
  private suspend(
    call: HeldCall,
    event: Extract<CallEvent, { kind: 'ask' }>,
    message: JsonRpcRequest,
    options: RequestOptions,
  ): JsonRpcResponse {
    const held = this.options.held;
    const caller = options.authContext ?? '';
    if (!held.calls.has(call.id) && heldBy(held, caller) >= held.maxHeldPerCaller) {
      // One caller may not hold more: each held call keeps a server waiting (and, on stdio, its other callers).
      event.respond({
        error: { code: ErrorCode.InternalError, message: 'The client holds too many unanswered questions' },
      });
      call.cancel();
      return errorResponse(
        message.id,
        ErrorCode.InvalidRequest,
        `${this.name} asks the client for ${event.method}, but this caller already has ${held.maxHeldPerCaller} ` +
          `calls waiting for its answers (mrtr.maxHeldPerCaller); answer them (retry each with its inputResponses) ` +
          `or let them expire (mrtr.holdMs), then call again`,
      );
    }
    call.round++;
    const key = `${CAPABILITY[event.method]}-${call.round}`;
    call.asked = { key, respond: event.respond };
    held.calls.set(call.id, call);
    const expiresAt = Date.now() + held.holdMs;
    options.trace?.event('mcp.gateway.mrtr.hold', {
      'mcp.gateway.mrtr.asks': event.method,
      'mcp.gateway.mrtr.round': call.round,
      'mcp.gateway.mrtr.hold_ms': held.holdMs,
    });
    call.holdFor(held.holdMs, () => {
      held.calls.delete(call.id);
      queueMicrotask(() => this.released()); // once the call is cancelled, below
      this.options.log.info(
        { server: this.name, method: message.method, ...traceFields(options.trace) },
        'a held call expired before the client retried; cancelled it',
      );
    });
    const requestState = held.codec.issue({
      instance: held.codec.instance,
      upstream: this.name,
      call: call.id,
      round: call.round,
      caller: options.authContext ?? '',
      request: requestDigest(message.method, message.params),
      expiresAt,
    });
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        resultType: 'input_required',
        inputRequests: { [key]: { method: event.method, params: event.params ?? {} } },
        requestState,
      },
    };
  }

  /** A retry: checks the requestState, answers the server's question, and carries on with the call. */
  private async resume(message: JsonRpcRequest, params: JsonObject, options: RequestOptions): Promise<JsonRpcResponse> {
    const held = this.options.held;
    const refuse = (why: string) =>
      errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Invalid requestState: ${why}; send the original request again without requestState and inputResponses`,
      );
    const opened = held.codec.open(params.requestState as string);
    if (!opened.ok) return refuse(opened.why);
    const state = opened.state;
    if (state.instance !== held.codec.instance) {
      // With Redis, the edge has already tried to forward this retry to its holder: getting here means the
      // holder has no live entry, could not be reached, or is a new process at the old address.
      if (held.shared)
        return refuse(
          `the call is held by gateway instance ${state.instance}, which is gone (it was stopped, restarted or ` +
            `killed, and the calls it held went with it) or cannot be reached from this one ` +
            `(${held.codec.instance}); the call cannot be resumed`,
        );
      return refuse(
        `the call is held by gateway instance ${state.instance}, not this one (${held.codec.instance}); send ` +
          `retries to the same instance, or share Redis (cache.store: redis) so replicas forward them`,
      );
    }
    if (state.upstream !== this.name)
      return refuse(`it was issued for a call on server ${state.upstream}, not ${this.name}`);
    if (Date.now() > state.expiresAt)
      return refuse(`it expired at ${new Date(state.expiresAt).toISOString()} (mrtr.holdMs)`);
    if (state.caller !== (options.authContext ?? '')) return refuse('it was issued to another caller');
    if (state.request !== requestDigest(message.method, params))
      return refuse('it was issued for a different request (a retry repeats the original params)');
    const call = held.calls.get(state.call);
    if (!call || call.upstream !== this.inner)
      return refuse('its call is no longer held (it finished, was cancelled, or expired)');
    if (state.round !== call.round || !call.asked)
      return refuse('it was already answered (each requestState is good for one retry)');
    const answers = isObject(params.inputResponses) ? params.inputResponses : {};
    const answer = answers[call.asked.key];
    if (!isObject(answer)) return refuse(`inputResponses has no answer under "${call.asked.key}"`);
    const { respond } = call.asked;
    call.asked = undefined;
    call.resumed();
    options.trace?.event('mcp.gateway.mrtr.resume', { 'mcp.gateway.mrtr.round': state.round });
    respond({ result: answer });
    return this.round(call, message, options);
  }
}

/** Calls held for this caller's retry, on every server of this instance. */
function heldBy(held: HeldCalls, caller: string): number {
  let count = 0;
  for (const call of held.calls.values()) if (call.asked && !call.finished && call.caller === caller) count++;
  return count;
}
