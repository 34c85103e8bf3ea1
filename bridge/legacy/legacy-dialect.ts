// A 2025-era server made to look modern, whatever carries it: requests lose the modern _meta keys, answers
// are completed to the 2026 rules, server/discover is answered from what the server said at initialize, a
// caller's log level is set on the shared connection before its request goes out (legacy-log-level.ts), and
// subscriptions/listen is played with resources/subscribe (below).
import type { Log } from '../../infra/log.js';
import { cancelledResponse, type CancelSignal } from '../../protocol/cancel.js';
import { isObject, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { Dialect } from '../dialect.js';
import type { RequestOptions } from '../upstream.js';
import {
  discoverResult,
  toLegacyRequest,
  toModernResponse,
  type LegacyHandshake,
  type LegacyOptions,
} from './legacy-adapter.js';
import { asksForLogs, LegacyLogLevel, type SendOwn } from './legacy-log-level.js';

export class LegacyDialect implements Dialect {
  readonly outgoing = toLegacyRequest;
  readonly logsUnasked = true;
  private readonly options: LegacyOptions;
  /** The connection's log level, raised as callers ask (a new connection starts from the server's default). */
  private readonly logLevel: LegacyLogLevel;
  /** The resources this connection's server was told to watch (a new connection starts with none). */
  private readonly watched = new Set<string>();

  constructor(
    readonly handshake: LegacyHandshake,
    ttlMs: number,
    /** Sends the gateway's own request on the connection (logging/setLevel). */
    private readonly sendOwn: SendOwn,
    private readonly log: Log,
  ) {
    this.options = { ttlMs };
    this.logLevel = new LegacyLogLevel('logging' in handshake.capabilities, sendOwn, log);
  }

  readonly intercept = (
    message: JsonRpcRequest,
    options: RequestOptions,
  ): JsonRpcResponse | Promise<JsonRpcResponse | undefined> | undefined => {
    if (message.method === 'server/discover')
      return { jsonrpc: '2.0', id: message.id, result: discoverResult(this.handshake, this.options) };
    if (message.method === 'subscriptions/listen') return this.listen(message, options.signal);
    return asksForLogs(message) ? this.logLevel.prepare(message) : undefined;
  };

  /**
   * A 2025 server has no subscriptions/listen: it sends its list changes unasked (they surface as the
   * upstream's listChanged, as a modern server's do on its stream) and watches resources one
   * resources/subscribe at a time. So the gateway's listen stream to it is played here: the URIs it names
   * are subscribed on this connection (and those it no longer names unsubscribed), and it stays open until
   * its caller closes it. It is not acknowledged: what a restarted server missed, its restart announces.
   */
  private listen(message: JsonRpcRequest, signal: CancelSignal | undefined): Promise<JsonRpcResponse> {
    const filter = message.params?.notifications;
    const named = isObject(filter) && Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions : [];
    const wanted = new Set(named.filter((uri): uri is string => typeof uri === 'string'));
    for (const uri of wanted) if (!this.watched.has(uri)) this.watch('resources/subscribe', uri);
    for (const uri of this.watched) if (!wanted.has(uri)) this.watch('resources/unsubscribe', uri);
    return new Promise((resolve) => {
      const end = (): void => resolve(cancelledResponse(message.id));
      if (!signal || signal.aborted) end();
      else signal.addEventListener('abort', end, { once: true });
    });
  }

  /**
   * A new session with the same server after it forgot the old one (HTTP 404): what the gateway's listen
   * stream had subscribed there is subscribed again here. The stream itself stays open (the upstream never
   * left ready), so nothing else would tell the server.
   */
  carryOver(previous: LegacyDialect): void {
    for (const uri of previous.watched) if (!this.watched.has(uri)) this.watch('resources/subscribe', uri);
  }

  private watch(method: 'resources/subscribe' | 'resources/unsubscribe', uri: string): void {
    if (method === 'resources/subscribe') this.watched.add(uri);
    else this.watched.delete(uri);
    void this.sendOwn({ jsonrpc: '2.0', id: `gateway-${method}`, method, params: { uri } }).then((response) => {
      if ('error' in response) this.log.warn({ uri, error: response.error.message }, `upstream refused ${method}`);
    });
  }

  complete(method: string, response: JsonRpcResponse): void {
    toModernResponse(method, response, this.handshake, this.options);
  }
}
