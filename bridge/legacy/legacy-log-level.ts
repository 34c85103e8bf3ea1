// A 2025 server's log level belongs to its connection (stdio process or HTTP session), which every caller
// shares, while a modern client asks per request (`_meta["io.modelcontextprotocol/logLevel"]`). Callers are
// kept apart by only ever making the connection more verbose: before a request that asks for a level the
// connection is not yet at, `logging/setLevel` sets it to that level, and it stays there for the
// connection's life. Which messages a caller sees is decided per request (a message goes only to the
// request it belongs to, and the edge passes only those at or above that request's own level).
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { LOG_LEVELS, logSeverity, META } from '../../protocol/mcp.js';

/** Sends the gateway's own request on the connection (its id is the connection's business). */
export type SendOwn = (request: JsonRpcRequest) => Promise<JsonRpcResponse>;

/** The request set a logLevel (a cheap look, made on every request to a 2025 server). */
export function asksForLogs(message: JsonRpcRequest): boolean {
  const meta = message.params?._meta;
  return isObject(meta) && meta[META.logLevel] !== undefined;
}

export class LegacyLogLevel {
  /** The connection's level as last set (LOG_LEVELS index); undefined: never set, the server's default. */
  private severity: number | undefined;

  constructor(
    /** The server declared `logging` at initialize: only then is logging/setLevel sent. */
    private readonly offered: boolean,
    private readonly send: SendOwn,
    private readonly log: Log,
  ) {}

  /**
   * Before `message` goes to the server: a logLevel that is not a level is refused (-32602, as a modern
   * server should answer it); one more verbose than the connection's is set first. Resolves with the
   * refusal, or undefined to go on. Only requests that carry a logLevel come here.
   */
  async prepare(message: JsonRpcRequest): Promise<JsonRpcResponse | undefined> {
    const level = (message.params?._meta as Record<string, unknown> | undefined)?.[META.logLevel];
    const severity = logSeverity(level);
    if (severity < 0) {
      return errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta["${META.logLevel}"] must be one of ${LOG_LEVELS.join(', ')}; got ` +
          `${JSON.stringify(level)}`,
      );
    }
    if (!this.offered || (this.severity !== undefined && this.severity <= severity)) return undefined;
    // Set before the answer, so concurrent callers asking for the same level send it once.
    const previous = this.severity;
    this.severity = severity;
    const answer = await this.send({
      jsonrpc: '2.0',
      id: 'gateway-log-level',
      method: 'logging/setLevel',
      params: { level: level as string },
    });
    if ('error' in answer || !isObject(answer.result)) {
      if (this.severity === severity) this.severity = previous;
      this.log.warn(
        { level, error: 'error' in answer ? answer.error.message : 'no result' },
        'upstream refused logging/setLevel; its log messages come at its own level',
      );
    }
    return undefined;
  }
}
