// Toward its upstreams the gateway is an MCP client, and the spec binds a client to reject a tool whose
// `x-mcp-header` declarations are invalid (protocol/x-mcp-header.ts): left out of tools/list with a logged
// reason, so that one malformed tool does not spoil the rest. The gateway serves every server over
// Streamable HTTP, where its own clients would have to reject such a tool too, so the rule holds for stdio
// servers as well. A tool left out is never called: a tools/call naming it is answered here. Sits on top of
// the cache: a list the cache (or another replica, through Redis) holds is read without an upstream call and
// still teaches which tools are left out; each tools array is judged once (memoised), and a refused call
// takes no slot.
import { eachListPage } from '../../bridge/list-pages.js';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { CachedUpstream } from './cached-upstream.js';
import type { Log } from '../../infra/log.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { headerDeclarationProblem } from '../../protocol/x-mcp-header.js';
import { UpstreamWrapper } from './upstream-wrapper.js';

export class HeaderRulesUpstream extends UpstreamWrapper {
  /** Tools left out, by the upstream's own name, with why. */
  private readonly invalid = new Map<string, string>();
  /** Whether a whole tools/list was read since the start or the last list change. */
  private known = false;
  private reading: Promise<unknown> | undefined;
  /** What each tools array (a cached answer's, handed out again and again) keeps. */
  private readonly judged = new WeakMap<readonly unknown[], unknown[] | undefined>();

  constructor(
    private readonly cached: CachedUpstream,
    private readonly log: Log,
  ) {
    super(cached);
    const inner = cached;
    inner.events.on('listChanged', (notification: { method: string }) => {
      if (notification.method === 'notifications/tools/list_changed') this.known = false;
    });
  }

  request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse> {
    if (message.method === 'tools/list')
      return this.inner.request(message, options).then((response) => this.filtered(message, response));
    if (message.method !== 'tools/call') return this.inner.request(message, options);
    return this.known ? this.call(message, options) : this.readList().then(() => this.call(message, options));
  }

  /** The stack below the cache (a pinned tool's definition is read there, as the server says it now). */
  get uncached(): Upstream {
    return this.cached.uncached;
  }

  /** Requests in flight finished within ms (a replaced server's drain): the cache below counts them. */
  drained(ms: number): Promise<boolean> {
    return this.cached.drained(ms);
  }

  private call(message: JsonRpcRequest, options: RequestOptions | undefined): Promise<JsonRpcResponse> {
    const name = message.params?.name;
    // Nearly always none is left out: then no lookup (hashing the caller's fresh name string) per call.
    const why = this.invalid.size > 0 && typeof name === 'string' ? this.invalid.get(name) : undefined;
    if (why === undefined) return this.inner.request(message, options);
    return Promise.resolve(
      errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Unknown tool: ${name as string} (mcp-gateway does not offer it: ${why}; the server must fix its inputSchema)`,
      ),
    );
  }

  /** The whole list, read once (its pages pass through `filtered`, which learns the invalid tools). */
  private readList(): Promise<unknown> {
    this.reading ??= eachListPage(this, 'tools/list', ownRequestMeta(), {}, () => {})
      .then((stopped) => {
        if (stopped === undefined) this.known = true;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /**
   * The page without its invalid tools: the answer as it came when none is, else a fresh one (the answer
   * may be a shared cache entry, or carry its pre-serialised text, which would still list them).
   */
  private filtered(message: JsonRpcRequest, response: JsonRpcResponse): JsonRpcResponse {
    if (!('result' in response) || !Array.isArray(response.result.tools)) return response;
    const tools = response.result.tools as unknown[];
    if (message.params?.cursor === undefined && typeof response.result.nextCursor !== 'string') this.known = true;
    let kept = this.judged.get(tools);
    if (!this.judged.has(tools)) {
      kept = this.judge(tools);
      this.judged.set(tools, kept);
    }
    return kept === undefined
      ? response
      : { jsonrpc: '2.0', id: response.id, result: { ...response.result, tools: kept } };
  }

  /** The tools kept, or undefined when all are; learns (and logs once) those left out. */
  private judge(tools: readonly unknown[]): unknown[] | undefined {
    let kept: unknown[] | undefined;
    for (let i = 0; i < tools.length; i++) {
      const tool = tools[i];
      const problem = isObject(tool) ? headerDeclarationProblem(tool.inputSchema) : undefined;
      if (problem !== undefined) {
        kept ??= tools.slice(0, i);
        this.leaveOut(tool as Record<string, unknown>, problem);
      } else {
        if (isObject(tool) && typeof tool.name === 'string') this.invalid.delete(tool.name);
        kept?.push(tool);
      }
    }
    return kept;
  }

  private leaveOut(tool: Record<string, unknown>, problem: string): void {
    const name = typeof tool.name === 'string' ? tool.name : JSON.stringify(tool.name);
    if (this.invalid.get(name) === problem) return; // said once per tool and reason
    this.invalid.set(name, problem);
    this.log.warn(
      { server: this.name, tool: name, reason: problem },
      'tool left out of tools/list: its x-mcp-header declarations break the spec (it is never called)',
    );
  }
}
