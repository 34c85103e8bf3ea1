// /mcp: many upstreams behind one endpoint. Lists fan out to every upstream (each within a deadline) and
// merge in server order with namespaced names. Named requests are placed by its router (router.ts) once, and
// the edge calls the owner through it; the aggregator is still an Upstream, so lists, discovery and anyone
// else holding it (a 2025 client's session, a test) are served the way one server's endpoint is.
import { EventEmitter } from 'node:events';
import { eachListPage } from '../../bridge/list-pages.js';
import type { RequestOptions, Upstream, UpstreamStatus } from '../../bridge/upstream.js';
import type { NamedTarget, UriTarget } from '../../policy/target.js';
import {
  ErrorCode,
  errorResponse,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { LIST_ITEMS, madeStaleBy, META, type ListMethod } from '../../protocol/mcp.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';
import { retryAfterOf } from '../../protocol/overload.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import { CursorCodec, type Position } from './cursor.js';
import { OfferedLists } from './offered-lists.js';
import { admit, type Admission } from './list-admission.js';
import { askWithinDeadline } from './deadline-ask.js';
import { mergeDiscover, partTtlMs, type Outcome } from './merged-discover.js';
import { MergedPages } from './merged-pages.js';
import { noUpstreamAnswered } from './no-answer.js';
import { showUiItem } from '../../protocol/ui-uris.js';
import { traceFields, type RequestTrace } from '../../protocol/request-trace.js';
import { placed, Router } from './router.js';
import { ListRefreshes } from './list-refresh.js';
import { type CallerConnections, isConnectAnswer, placeholderPart } from './connect-placeholder.js';

export interface AggregatorOptions {
  /** In config order: the order of merged lists. */
  upstreams: ReadonlyMap<string, Upstream>;
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  listDeadlineMs: number;
  cursorSecret: string | undefined;
  log: Log;
  /** Servers a caller must connect before their lists can be read: those show a placeholder tool until then. */
  connections?: CallerConnections | undefined;
  /** Servers whose lists are each caller's own (perCaller, credentials:): /mcp reads them as the caller to route. */
  listsPerCaller?: ((server: string) => boolean) | undefined;
  /** Why a server knows a tool but does not offer it (an OpenAPI operation refused at load), for a call of it. */
  whyNotOffered?: ((server: string, tool: string) => string | undefined) | undefined;
}

export class Aggregator implements Upstream {
  readonly name = 'mcp';
  readonly events = new EventEmitter();
  /** Lists that an upstream did not answer in time or answered with an error, by server. */
  readonly gaps = new Map<string, number>();
  /**
   * Why each server's list last failed, by `<method>\0<server>`, until it answers that list again: a name looked
   * for while its owner's list failed is not called unknown (router.ts).
   */
  private readonly listFailures = new Map<string, string>();
  private readonly listeners = new Map<
    string,
    { upstream: Upstream; listener: (notification: { method: string }) => void }
  >();
  /** Routes learned from the lists below; the edge places /mcp requests with it before policy. */
  readonly router: Router;
  private readonly cursors: CursorCodec;
  private readonly pages = new MergedPages();
  /**
   * Lists read again to learn routes on a miss (list-refresh.ts); an error that ends a reading early leaves the routes
   * read so far.
   */
  private readonly refreshes = new ListRefreshes((method, reader) =>
    eachListPage(this, method, ownRequestMeta(), reader, () => {}),
  );
  /** Each upstream's server/discover capabilities, once read: which lists it offers at all. */
  /** What recording a listed item needs (list-admission.ts). */
  private readonly admission: Admission;
  private readonly offered = new OfferedLists((server) => this.options.upstreams.has(server));

  constructor(private readonly options: AggregatorOptions) {
    this.cursors = new CursorCodec(options.cursorSecret);
    this.router = new Router({
      upstreams: options.upstreams,
      prefixes: options.prefixes,
      separator: options.separator,
      refresh: (method, asCaller) => this.refreshes.refresh(method, asCaller),
      listFailure: (server, method) => this.listFailures.get(`${method}\0${server}`),
      connections: options.connections,
      listsPerCaller: options.listsPerCaller,
      whyNotOffered: options.whyNotOffered,
    });
    this.admission = {
      router: this.router,
      log: options.log,
      prefixes: options.prefixes,
      separator: options.separator,
    };
    for (const [server, upstream] of options.upstreams) this.attach(server, upstream);
  }

  /** In config order; the upstreams map may change on reload. */
  private get servers(): string[] {
    return [...this.options.upstreams.keys()];
  }

  private get known(): ReadonlySet<string> {
    return new Set(this.options.upstreams.keys());
  }

  /** Follows a server's list changes (a reload adding or replacing it calls this again). */
  attach(server: string, upstream: Upstream): void {
    this.detach(server);
    const listener = (notification: { method: string }): void => this.forget(server, notification.method);
    upstream.events.on('listChanged', listener);
    this.listeners.set(server, { upstream, listener });
  }

  /** Forgets a server removed or replaced by a reload: its routes, and merged pages that held its items. */
  detach(server: string): void {
    const attached = this.listeners.get(server);
    if (attached) attached.upstream.events.off('listChanged', attached.listener);
    this.listeners.delete(server);
    this.router.tools.forgetServer(server);
    this.router.prompts.forgetServer(server);
    this.router.resources.forgetServer(server);
    this.pages.clear();
  }

  status(): UpstreamStatus {
    const states = [...this.options.upstreams.values()].map((u) => u.status().state);
    return { state: states.includes('ready') ? 'ready' : 'starting', era: 'modern', restarts: 0, lastError: undefined };
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    switch (message.method) {
      case 'tools/list':
      case 'prompts/list':
      case 'resources/list':
      case 'resources/templates/list':
        return this.list(message, message.method, options);
      case 'tools/call':
      case 'prompts/get':
      case 'resources/read':
      case 'completion/complete':
        // The edge routes these itself (router.ts) and calls the owner; this serves anyone else asking.
        return this.routed(message, options);
      case 'server/discover':
        return this.discover(message, options);
      default:
        return Promise.resolve(
          errorResponse(message.id, ErrorCode.MethodNotFound, `${message.method} is not served on /mcp`),
        );
    }
  }

  // ---- lists ----------------------------------------------------------------------------------------

  private async list(message: JsonRpcRequest, method: ListMethod, options: RequestOptions): Promise<JsonRpcResponse> {
    const { authContext, reach } = options;
    const params = message.params ?? {};
    // Only pages this gateway built are kept, so a cached cursor was one it issued; '' would not be.
    // Callers who reach different upstreams get different pages, even public ones.
    if (params.cursor !== undefined && typeof params.cursor !== 'string') {
      return errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Invalid cursor for ${method}: a cursor is a string (the nextCursor of the previous page)`,
      );
    }
    const cursorKey = `${reach ? `${reach.key}\0` : ''}${params.cursor === undefined ? '' : `cursor:${params.cursor}`}`;
    const cached = this.pages.get(message.id, method, cursorKey, authContext);
    if (cached) return cached;
    let positions: Position[];
    if (params.cursor === undefined) {
      positions = this.servers.map((server): Position => [server, null]);
    } else {
      const decoded =
        typeof params.cursor === 'string' ? this.cursors.decode(method, params.cursor, this.known) : undefined;
      if (!decoded) {
        return errorResponse(
          message.id,
          ErrorCode.InvalidParams,
          `Invalid cursor for ${method}: it was not issued by this gateway for this list (or the gateway ` +
            `restarted); list again without a cursor`,
        );
      }
      positions = decoded;
    }
    if (reach) positions = positions.filter(([server]) => reach.reaches(server));
    positions = this.offered.offering(positions, method);

    const standIns = new Set<string>();
    const outcomes = await Promise.all(
      positions.map(([server, cursor]) => this.part(server, method, params, cursor, options, standIns)),
    );
    // After the pages, so that a first list never waits behind a discover (nor asks one of a server the caller has not
    // connected).
    this.offered.learnAfter(
      method,
      positions.map(([server]) => server).filter((server) => !standIns.has(server)),
      (server) => this.ask(server, 'server/discover', {}, null, options),
    );
    const firstPages = new Set(positions.filter(([, cursor]) => cursor === null).map(([server]) => server));
    const merged = this.merge(message.id, method, outcomes, firstPages, options.trace);
    if ('result' in merged) this.pages.set(method, cursorKey, authContext, merged.result);
    return merged;
  }

  /** The upstreams' pages as one: items admitted in server order, the strictest ttl and scope, gaps noted. */
  private merge(
    id: JsonRpcId,
    method: ListMethod,
    outcomes: readonly Outcome[],
    firstPages: ReadonlySet<string>,
    trace: RequestTrace | undefined,
  ): JsonRpcResponse {
    const key = LIST_ITEMS[method];
    const items: unknown[] = [];
    const next: Position[] = [];
    let ttlMs = Number.POSITIVE_INFINITY;
    let cacheScope: 'public' | 'private' = 'public';
    let answered = 0;
    const failures: string[] = [];
    const retryAfters: number[] = []; // one per failure that was a capacity refusal
    for (const outcome of outcomes) {
      const server = outcome.server;
      // A server removed by a reload while this list was being read must not come back through it.
      if (!this.options.upstreams.has(server)) continue;
      if ('timedOut' in outcome) {
        failures.push(`${server}: no answer within aggregate.listDeadlineMs (${this.options.listDeadlineMs} ms)`);
        continue;
      }
      this.listFailures.delete(`${method}\0${server}`);
      const response = outcome.response;
      if ('error' in response) {
        if (response.error.code === ErrorCode.MethodNotFound)
          answered++; // it offers none of these
        else failures.push(`${server}: ${response.error.message}`);
        const seconds = retryAfterOf(response);
        if (seconds !== undefined) retryAfters.push(seconds);
        continue;
      }
      answered++;
      const result = response.result;
      const page = Array.isArray(result[key]) ? (result[key] as unknown[]) : [];
      // A first page starts the server's resources afresh, so URIs it no longer lists are forgotten.
      if (firstPages.has(server)) {
        if (method === 'resources/list') this.router.resources.forgetResources(server);
        else if (method === 'resources/templates/list') this.router.resources.forgetTemplates(server);
      }
      // MCP Apps' ui:// URIs get the server's namespace first (in copies: ui-uris.ts).
      const head = this.router.headOf(server);
      for (const item of page) {
        const admitted = admit(
          this.admission,
          method,
          server,
          showUiItem(method, head, item),
          outcome.standIn === true,
        );
        if (admitted) items.push(admitted);
      }
      if (typeof result.nextCursor === 'string') next.push([outcome.server, result.nextCursor]);
      ttlMs = Math.min(ttlMs, partTtlMs(result));
      if (result.cacheScope !== 'public') cacheScope = 'private';
    }
    for (const failure of failures) {
      const server = failure.slice(0, failure.indexOf(':'));
      this.gaps.set(server, (this.gaps.get(server) ?? 0) + 1);
      this.listFailures.set(`${method}\0${server}`, failure.slice(server.length + 2));
      this.options.log.warn(
        { method, gap: failure, ...traceFields(trace) },
        'answered a list on /mcp without one upstream',
      );
    }
    if (answered === 0 && failures.length > 0) return noUpstreamAnswered(id, method, failures, retryAfters);
    const result: JsonObject = {
      resultType: 'complete',
      [key]: items,
      // A list missing an upstream must not be kept as if it were whole.
      ttlMs: Number.isFinite(ttlMs) && failures.length === 0 ? ttlMs : 0,
      cacheScope,
      _meta: { [META.serverInfo]: GATEWAY_INFO },
    };
    if (next.length) result.nextCursor = this.cursors.encode(method, next);
    return { jsonrpc: '2.0', id, result };
  }

  /**
   * Some upstream's lists changed (here or on another replica): merged pages built from them are stale. `isFor`
   * names whose lists alone changed (a caller connected or revoked a server): their reads are stale as well.
   */
  listsChanged(isFor?: (principal: string) => boolean): void {
    this.pages.clear();
    this.offered.clear();
    if (isFor) this.refreshes.liftFor(isFor);
  }

  /**
   * One server's part of a list: its own page, or for a caller who has not connected it yet (a server that
   * needs their own account or values) the placeholder part, without asking it (connect-placeholder.ts).
   */
  private async part(
    server: string,
    method: ListMethod,
    params: JsonObject,
    cursor: string | null,
    options: RequestOptions,
    standIns: Set<string>,
  ): Promise<Outcome> {
    const connections = this.options.connections;
    const kind = connections?.needs(server);
    const principal = options.caller?.principal;
    if (kind === undefined || principal === undefined) return this.ask(server, method, params, cursor, options);
    // A store that cannot be read (Redis away) is not "not connected": the server's stack says what is wrong.
    const standIn = (): Outcome => {
      standIns.add(server);
      return { server, response: placeholderPart(method, server, kind, cursor === null), standIn: true };
    };
    if (!(await connections!.connected(server, principal).catch(() => true))) return standIn();
    const outcome = await this.ask(server, method, params, cursor, options);
    // Connected when checked, but the server's stack answered with its connect flow (a refresh refused since).
    return 'response' in outcome && isConnectAnswer(outcome.response) ? standIn() : outcome;
  }

  /** One upstream's page within the list deadline (deadline-ask.ts). */
  private ask(
    server: string,
    method: string,
    params: JsonObject,
    cursor: string | null,
    options: RequestOptions,
  ): Promise<Outcome> {
    return askWithinDeadline(
      this.options.upstreams.get(server),
      server,
      method,
      { params, cursor },
      options,
      this.options.listDeadlineMs,
    );
  }

  // ---- routing --------------------------------------------------------------------------------------

  /** A named or URI request placed by the router, the lists read again first when it names nothing listed. */
  private async routed(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    let target = this.router.resolve(undefined, message);
    if (!placed(target)) target = await this.router.confirm(target, options);
    return this.router.call(target as NamedTarget | UriTarget, message, options);
  }

  /** The one upstream that owns a resource URI (or template), from what the lists said; else undefined. */
  ownerOf(uri: string): string | undefined {
    return this.router.ownerOf(uri);
  }

  /** How many tools each upstream lists, reading the lists again (cached, at most once a second) first. */
  async toolCounts(): Promise<Map<string, number>> {
    await this.refreshes.refresh('tools/list');
    return this.router.tools.countByServer();
  }

  private forget(server: string, notification: string): void {
    for (const method of madeStaleBy(notification)) {
      const routes =
        method === 'tools/list'
          ? this.router.tools
          : method === 'prompts/list'
            ? this.router.prompts
            : method === 'resources/list'
              ? this.router.resources
              : undefined;
      if (routes === undefined) continue;
      routes.forgetServer(server);
      // The next miss reads the list again at once: the once-a-second limit is for names nobody lists, and a
      // server's routes were just forgotten (a tool it added a moment ago must not answer "unknown").
      this.refreshes.lift(method);
    }
  }

  // ---- discover -------------------------------------------------------------------------------------

  private async discover(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const reach = options.reach;
    const servers = reach ? this.servers.filter((server) => reach.reaches(server)) : this.servers;
    const outcomes = await Promise.all(
      servers.map((server) => this.ask(server, 'server/discover', message.params ?? {}, null, options)),
    );
    for (const outcome of outcomes) this.offered.note(outcome);
    return { jsonrpc: '2.0', id: message.id, result: mergeDiscover(outcomes, this.options.separator, reach) };
  }
}
