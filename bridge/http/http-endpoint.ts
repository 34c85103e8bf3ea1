// The connection pool to one remote MCP endpoint and the headers every request to it carries: the
// content negotiation pair and the configured static headers (credentials), folded once into a flat
// list that each request copies and extends.
import { Pool } from 'undici';
import { HttpExchange, type ExchangeOptions } from './http-exchange.js';

/** Header names the gateway sets itself; a configured header of one of these names is ignored. */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'accept',
  'host',
  'connection',
  'transfer-encoding',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
]);

export interface EndpointOptions {
  /** How long opening a connection may take. */
  connectTimeoutMs: number;
}

export class HttpEndpoint {
  readonly url: URL;
  /** Names of configured headers that were dropped because the gateway sets them itself. */
  readonly ignoredHeaders: string[] = [];
  private readonly pool: Pool;
  private readonly path: string;
  private readonly fixed: readonly string[];

  constructor(url: string, headers: Readonly<Record<string, string>>, options: EndpointOptions) {
    this.url = new URL(url);
    this.path = `${this.url.pathname}${this.url.search}`;
    const fixed = ['content-type', 'application/json', 'accept', 'application/json, text/event-stream'];
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (RESERVED.has(lower)) this.ignoredHeaders.push(name);
      else fixed.push(lower, value);
    }
    this.fixed = fixed;
    this.pool = new Pool(this.url.origin, {
      connect: { timeout: options.connectTimeoutMs },
      // The exchange enforces its own deadline; undici's would cut long SSE answers short.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** A fresh header list holding the fixed headers, for the caller to extend. */
  headers(): string[] {
    return this.fixed.slice();
  }

  /**
   * Sends one request; the promise settles with the exchange however it ended (it never rejects). A
   * request that meets a kept-alive connection the server had already closed (a restart does that) fails
   * before any answer, unread by the server: it is sent once more on a fresh connection.
   */
  async send(
    method: 'POST' | 'GET' | 'DELETE',
    headers: readonly string[],
    body: string | null,
    options: ExchangeOptions,
  ): Promise<HttpExchange> {
    const first = await this.sendOnce(method, headers, body, options);
    if (!closedBeforeAnswer(first) || options.signal?.aborted) return first;
    return this.sendOnce(method, headers, body, options);
  }

  private sendOnce(
    method: 'POST' | 'GET' | 'DELETE',
    headers: readonly string[],
    body: string | null,
    options: ExchangeOptions,
  ): Promise<HttpExchange> {
    const exchange = new HttpExchange(options);
    if (options.signal?.aborted) {
      exchange.cancel();
      return exchange.promise;
    }
    try {
      this.pool.dispatch({ path: this.path, method, headers: headers as string[], body }, exchange);
    } catch (error) {
      exchange.onResponseError(undefined as never, error as Error);
    }
    return exchange.promise;
  }

  /** Closes every connection; exchanges still running end as `network` failures. */
  async close(): Promise<void> {
    await this.pool.destroy().catch(() => {});
  }
}

const CLOSED_SOCKET = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** The connection closed under the request before any status line came back. */
function closedBeforeAnswer(exchange: HttpExchange): boolean {
  const code = (exchange.error as NodeJS.ErrnoException | undefined)?.code;
  return exchange.end === 'network' && exchange.status === 0 && code !== undefined && CLOSED_SOCKET.has(code);
}
