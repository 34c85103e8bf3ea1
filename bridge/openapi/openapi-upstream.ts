// A REST API described by an OpenAPI document, as an upstream: tools/list from the document, tools/call as
// one HTTP request (request.ts, rest-client.ts, tool-result.ts). There is no process or session to supervise:
// the document is loaded before the upstream exists (a document that does not load is a load error), and a
// reload that finds it changed swaps the tools and says list_changed. Like every upstream it never rejects.
import { EventEmitter } from 'node:events';
import type { CancelSignal } from '../../protocol/cancel.js';
import { cancelledResponse } from '../../protocol/cancel.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { META, MODERN_VERSION } from '../../protocol/mcp.js';
import type { Log } from '../../infra/log.js';
import type { RequestOptions, Upstream, UpstreamState, UpstreamStatus } from '../upstream.js';
import { ArgumentChecker } from './arguments.js';
import { buildCatalogue, type Catalogue, type CatalogueEntry, type CatalogueSettings } from './catalogue.js';
import type { JsonSchema } from './schema-convert.js';
import { credentialRefusal } from './credential-refusal.js';
import { loadDocument } from './document.js';
import { ArgumentError, buildRequest } from './request.js';
import { RestClient } from './rest-client.js';
import { toolResult } from './tool-result.js';

export interface OpenApiConfig extends CatalogueSettings {
  readonly name: string;
  /** The document: an absolute file path or an http(s) URL. */
  readonly document: string;
  /** Sent with every request; they win over a header parameter of the same name. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly listTtlMs: number;
  readonly maxResponseBytes: number;
}

const SERVER_INFO = { name: 'openapi', version: '1.0.0' };

export class OpenApiUpstream implements Upstream {
  readonly events = new EventEmitter();
  readonly name: string;
  private state: UpstreamState = 'stopped';
  private readonly checker = new ArgumentChecker();
  /** Answers against each tool's outputSchema: validators of their own, keyed by the same tool names. */
  private readonly answers = new ArgumentChecker();
  private readonly listens = new Set<() => void>();
  private readonly headers: Record<string, string>;

  private constructor(
    private readonly config: OpenApiConfig,
    private catalogue: Catalogue,
    private documentText: string,
    private client: RestClient,
    private readonly log: Log,
  ) {
    this.name = config.name;
    this.headers = Object.fromEntries(Object.entries(config.headers).map(([key, value]) => [key.toLowerCase(), value]));
  }

  /** Reads, validates and turns the document into tools; throws a message naming the place when it cannot. */
  static async load(config: OpenApiConfig, log: Log): Promise<OpenApiUpstream> {
    const document = await loadDocument(config.document, config.where);
    const catalogue = buildCatalogue(document, config, (message) => log.warn({}, message));
    const client = new RestClient({
      origin: catalogue.origin,
      timeoutMs: config.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
    });
    log.info({ tools: catalogue.tools.length, origin: catalogue.origin }, 'OpenAPI document loaded');
    return new OpenApiUpstream(config, catalogue, document.text, client, log);
  }

  /**
   * Reads the document again: when it changed, its tools replace the old ones and listen streams hear
   * notifications/tools/list_changed. A document that no longer loads leaves the old tools served (logged).
   */
  async reread(): Promise<void> {
    await this.reload();
  }

  async reload(): Promise<boolean> {
    let catalogue: Catalogue;
    let text: string;
    try {
      const document = await loadDocument(this.config.document, this.config.where);
      if (document.text === this.documentText) return false;
      text = document.text;
      catalogue = buildCatalogue(document, this.config, (message) => this.log.warn({}, message));
    } catch (error) {
      this.log.error({ err: (error as Error).message }, 'the OpenAPI document did not reload; the old tools stay');
      return false;
    }
    if (catalogue.origin !== this.catalogue.origin) {
      const old = this.client;
      this.client = new RestClient({
        origin: catalogue.origin,
        timeoutMs: this.config.timeoutMs,
        maxResponseBytes: this.config.maxResponseBytes,
      });
      void old.close().catch(() => {});
    }
    this.catalogue = catalogue;
    this.documentText = text;
    this.checker.clear();
    this.answers.clear();
    this.log.info({ tools: catalogue.tools.length }, 'OpenAPI document changed; tools replaced');
    this.events.emit('listChanged', { method: 'notifications/tools/list_changed' });
    return true;
  }

  whyNotOffered(tool: string): string | undefined {
    return this.catalogue.refused.get(tool);
  }

  status(): UpstreamStatus {
    return { state: this.state, era: 'modern', restarts: 0, lastError: undefined };
  }

  async start(): Promise<void> {
    this.setState('ready');
  }

  async close(): Promise<void> {
    for (const end of [...this.listens]) end();
    this.setState('stopped');
    await this.client.close().catch(() => {});
  }

  private setState(state: UpstreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.events.emit('state', state);
  }

  request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse> {
    return this.answer(message, options).catch((error: unknown) =>
      errorResponse(message.id, ErrorCode.InternalError, `${this.config.where}: ${(error as Error).message}`),
    );
  }

  private async answer(message: JsonRpcRequest, options: RequestOptions | undefined): Promise<JsonRpcResponse> {
    const ok = (result: Record<string, unknown>): JsonRpcResponse => ({ jsonrpc: '2.0', id: message.id, result });
    switch (message.method) {
      case 'server/discover':
        return ok({
          resultType: 'complete',
          supportedVersions: [MODERN_VERSION],
          capabilities: { tools: { listChanged: true } },
          ttlMs: this.config.listTtlMs,
          cacheScope: 'public',
          _meta: { [META.serverInfo]: SERVER_INFO },
        });
      case 'tools/list':
        return ok({
          resultType: 'complete',
          tools: this.catalogue.tools,
          ttlMs: this.config.listTtlMs,
          cacheScope: 'public',
        });
      case 'tools/call':
        return this.call(message, options);
      case 'ping':
        return ok({});
      case 'subscriptions/listen':
        return this.listen(message, options);
      default:
        return errorResponse(
          message.id,
          ErrorCode.MethodNotFound,
          `Method not found: ${message.method} (a REST API serves tools only)`,
        );
    }
  }

  private async call(message: JsonRpcRequest, options: RequestOptions | undefined): Promise<JsonRpcResponse> {
    const params = message.params ?? {};
    const name = params.name;
    const entry = typeof name === 'string' ? this.catalogue.entries.get(name) : undefined;
    if (!entry) {
      const refused = typeof name === 'string' ? this.catalogue.refused.get(name) : undefined;
      const why = refused ? `Tool ${name} is not offered: ${refused}` : `Unknown tool: ${String(name)}`;
      return errorResponse(message.id, ErrorCode.InvalidParams, why);
    }
    const args = params.arguments ?? {};
    const problem = isObject(args)
      ? this.checker.problem(entry.plan.name, entry.plan.inputSchema, args)
      : 'arguments must be an object';
    if (problem)
      return errorResponse(message.id, ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${problem}`);
    let request: ReturnType<typeof buildRequest>;
    try {
      request = buildRequest(entry.plan, args as Record<string, unknown>, entry.basePath);
    } catch (error) {
      if (error instanceof ArgumentError)
        return errorResponse(
          message.id,
          ErrorCode.InvalidParams,
          `Invalid arguments for tool ${name}: ${error.message}`,
        );
      throw error;
    }
    const headers = { ...request.headers, ...this.headers };
    // The caller's own credential, when the server is reached as each caller (src/credentials/).
    if (options?.authorization) headers.authorization = options.authorization;
    if (options?.traceparent) headers.traceparent = options.traceparent;
    if (options?.tracestate) headers.tracestate = options.tracestate;
    const outcome = await this.client.send({ ...request, headers }, options?.signal);
    if (outcome.kind === 'cancelled') return cancelledResponse(message.id);
    const url = `${this.catalogue.origin}${request.path}`;
    const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
    if (options?.authorization !== undefined && outcome.kind === 'answer') {
      const refused = credentialRefusal(message.id, outcome, { name: this.name, url: shown });
      if (refused) return refused;
    }
    const result = toolResult(outcome, {
      where: this.config.where,
      url: shown,
      wrapsResult: entry.plan.wrapsResult,
      timeoutMs: this.config.timeoutMs,
      maxResponseBytes: this.config.maxResponseBytes,
    });
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: { resultType: 'complete', ...this.asDocumented(entry, result, shown) },
    };
  }

  /**
   * A result whose structuredContent the tool's outputSchema refuses becomes a tool error that keeps the answer's
   * text and says what differs: MCP requires structured content to match the schema (SDK clients reject one that
   * does not, with an error that names neither the API nor the field), and the document, not the gateway, said
   * what the API answers.
   */
  private asDocumented(entry: CatalogueEntry, result: Record<string, unknown>, url: string): Record<string, unknown> {
    const schema = entry.plan.definition.outputSchema as JsonSchema | undefined;
    if (schema === undefined || result.structuredContent === undefined) return result;
    const problem = this.answers.problem(entry.plan.name, schema, result.structuredContent, 'the answer');
    if (problem === undefined) return result;
    const note =
      `The REST API's answer to ${url} does not match the response schema its OpenAPI document gives (${problem}); ` +
      `the answer is above. Correct the document (servers.${this.name}.openapi) or the API.`;
    return { content: [...(result.content as unknown[]), { type: 'text', text: note }], isError: true };
  }

  /** Held open until the caller goes or the upstream closes: list changes arrive as the 'listChanged' event. */
  private listen(message: JsonRpcRequest, options: RequestOptions | undefined): Promise<JsonRpcResponse> {
    options?.onNotification?.({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} });
    return new Promise((resolve) => {
      const signal: CancelSignal | undefined = options?.signal;
      const end = (): void => {
        this.listens.delete(end);
        signal?.removeEventListener('abort', end);
        resolve(cancelledResponse(message.id));
      };
      if (signal?.aborted) return end();
      this.listens.add(end);
      signal?.addEventListener('abort', end);
    });
  }
}
