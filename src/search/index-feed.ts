// Keeps the tool index in step with the aggregate: each server's tools, named as /mcp names them, read
// through the server's cached upstream when it is new or replaced, when its tools list changed (here or
// on another replica: the cache's invalidations say so), when it becomes ready after a failed read, and
// every `rereadMs` — a server without a listen stream, or one that changes without saying so, is otherwise
// never heard. Per server, so a change costs one server's list, never the whole catalog's; a list read
// again unchanged (from the cache, usually) leaves the index alone.
import { eachListPage } from '../../bridge/list-pages.js';
import type { Upstream } from '../../bridge/upstream.js';
import type { Log } from '../../infra/log.js';
import {
  ErrorCode,
  isObject,
  type JsonObject,
  type JsonRpcResponse,
  type JsonRpcSuccess,
} from '../../protocol/jsonrpc.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';
import { publicName } from '../../protocol/public-names.js';
import type { ToolIndex } from './tool-index.js';

export interface IndexFeedOptions {
  /** The served servers, in config order (read live: a reload changes them). */
  upstreams: ReadonlyMap<string, Upstream>;
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  log: Log;
  /** How often every server's tools are read again, once the index is in use. */
  rereadMs?: number;
}

const REREAD_MS = 60_000;

export class IndexFeed {
  /** The upstream each server's entries were read from, and its state listener. */
  private readonly followed = new Map<string, { upstream: Upstream; onState: (state: string) => void }>();
  private readonly reading = new Map<string, Promise<void>>();
  /** Servers whose list changed while being read: read again once that read ends. */
  private readonly again = new Set<string>();
  /** Servers whose last read failed: read again when they become ready. */
  private readonly failed = new Set<string>();
  /** Each server's tools as last indexed (JSON), so an unchanged list is not indexed again. */
  private readonly indexed = new Map<string, string>();
  private rereading: NodeJS.Timeout | undefined;

  constructor(
    private readonly index: ToolIndex,
    private readonly options: IndexFeedOptions,
  ) {}

  /** Reads the servers that are new or replaced, forgets those removed (at start and after a reload). */
  sync(): void {
    if (this.rereading === undefined) {
      this.rereading = setInterval(() => this.refreshAll(), this.options.rereadMs ?? REREAD_MS);
      this.rereading.unref();
    }
    for (const [server, upstream] of this.options.upstreams)
      if (this.followed.get(server)?.upstream !== upstream) this.follow(server, upstream);
    for (const server of [...this.followed.keys()]) if (!this.options.upstreams.has(server)) this.forget(server);
  }

  /** One server's tools changed: read them again (one read at a time per server). */
  refresh(server: string): void {
    if (!this.followed.has(server)) return;
    if (this.reading.has(server)) {
      this.again.add(server);
      return;
    }
    const reading = this.read(server)
      .catch((error: unknown) => {
        // A read that throws must not leave search broken: the server is read again when next ready.
        this.failed.add(server);
        this.options.log.warn(
          { server, err: (error as Error).message },
          'tool index: reading this server failed; its entries stay as they were',
        );
      })
      .finally(() => {
        this.reading.delete(server);
        if (this.again.delete(server)) this.refresh(server);
      });
    this.reading.set(server, reading);
  }

  refreshAll(): void {
    for (const server of this.followed.keys()) this.refresh(server);
  }

  /** Resolves once no read is under way. */
  async settled(): Promise<void> {
    while (this.reading.size > 0) await Promise.all(this.reading.values());
  }

  close(): void {
    clearInterval(this.rereading);
    for (const server of [...this.followed.keys()]) this.forget(server);
  }

  private follow(server: string, upstream: Upstream): void {
    this.unfollow(server);
    const onState = (state: string): void => {
      if (state === 'ready' && this.failed.has(server)) this.refresh(server);
    };
    upstream.events.on('state', onState);
    this.followed.set(server, { upstream, onState });
    this.refresh(server);
  }

  private forget(server: string): void {
    this.unfollow(server);
    this.failed.delete(server);
    this.indexed.delete(server);
    this.index.remove(server);
  }

  private unfollow(server: string): void {
    const followed = this.followed.get(server);
    if (followed) followed.upstream.events.off('state', followed.onState);
    this.followed.delete(server);
  }

  private async read(server: string): Promise<void> {
    const upstream = this.followed.get(server)?.upstream;
    if (!upstream) return;
    const tools = await listTools(upstream);
    // Replaced or removed meanwhile: its successor has a read of its own.
    if (this.followed.get(server)?.upstream !== upstream) return;
    if (tools === undefined) {
      // What was indexed stays findable (a call then says the server's state); ready again, it is read again.
      this.failed.add(server);
      this.options.log.debug({ server }, 'tool index: could not list this server now; reading again when it is ready');
      return;
    }
    this.failed.delete(server);
    const text = JSON.stringify(tools);
    if (this.indexed.get(server) === text) return;
    this.indexed.set(server, text);
    const prefix = this.options.prefixes.get(server) ?? server;
    const named: JsonObject[] = [];
    for (const tool of tools)
      if (typeof tool.name === 'string')
        named.push({ ...tool, name: publicName(prefix, this.options.separator, tool.name) });
    this.index.replace(server, named);
  }
}

/** Every page of one server's tools/list (cached like anyone's), or undefined when a page fails. */
async function listTools(upstream: Upstream): Promise<JsonObject[] | undefined> {
  const meta = ownRequestMeta();
  const tools: JsonObject[] = [];
  const collect = (page: JsonRpcSuccess): void => {
    const items = page.result.tools;
    if (Array.isArray(items)) for (const item of items) if (isObject(item)) tools.push(item);
  };
  let failure: JsonRpcResponse | undefined;
  try {
    failure = await eachListPage(upstream, 'tools/list', meta, {}, collect);
  } catch {
    return undefined;
  }
  // A server that offers no tools at all has none to index.
  if (failure === undefined || ('error' in failure && failure.error.code === ErrorCode.MethodNotFound)) return tools;
  return undefined;
}
