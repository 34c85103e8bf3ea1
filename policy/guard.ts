// Applies a principal's grant to what a request is about, as the router placed it (policy/target.ts): a
// request for something outside the allow-list is answered exactly as one for something that does not
// exist, and lists lose what the caller may not see. It looks nothing up: when a decision needs the lists
// read again (an allowed name nobody listed yet) it says so, and the edge asks the router and judges again.
// Names are judged as /mcp shows them (`<prefix><sep><name>`) on every endpoint, so one rule covers a tool
// whichever way it is reached.
import { ErrorCode, errorResponse, isObject, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { ListMethod } from '../protocol/mcp.js';
import { publicName } from '../protocol/public-names.js';
import type { Grant, ItemKind } from './allow-list.js';
import type { PinStore, PinVerdict } from './pins.js';
import type { Principal } from './principal.js';
import { carriesConnectMark, type NamedTarget, type Target, type UriTarget } from './target.js';
import { textOf } from '../protocol/exact-json.js';
import { isUiUri, ownerOfUiUri } from '../protocol/ui-uris.js';

export interface GuardOptions {
  /** Each server's prefix on /mcp, in config order (read live: a reload may change them). */
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  /** The upstream that owns a resource URI or template on /mcp, as the last lists said (to filter lists). */
  ownerOf(uri: string): string | undefined;
  pins: PinStore;
  /** pinsMaxAgeMs: the oldest a pinned tool's definition may be when a call is judged against it (default 60 s). */
  pinMaxAgeMs?: number;
}

/** How old a pinned tool's definition may be, read from its server, when a call is judged against it. */
export const DEFAULT_PIN_MAX_AGE_MS = 60_000;

/** What the pins said of a tool's definition, and when the server was asked for it (-Infinity: only seen in a list). */
interface PinSeen {
  verdict: PinVerdict;
  readAt: number;
}

export interface Verdict {
  allowed: boolean;
  rule: string;
  /** The name or URI the request is about, as /mcp names it. */
  target?: string;
  /** The answer to send instead of forwarding, when refused. */
  refusal?: JsonRpcResponse;
}

/** The verdict on a caller no policy names: authenticated is enough (the edge's judge and the task step). */
export const AUTHENTICATED: Verdict = { allowed: true, rule: 'authenticated; no policies configured' };

/**
 * What the guard needs before it can decide: `routes`, the router to read its lists again for this target
 * (a name nobody listed yet; on /mcp a URI whose owner is unknown or refuses, so that both cost the same);
 * `definition`, a pinned tool's definition as its server gives it now (read past every cache, and handed
 * to `definitionRead`), because the one judged last is older than pinsMaxAgeMs or there is none.
 */
export interface Need {
  need: 'routes' | 'definition';
}

const LISTS: Record<ListMethod, { items: string; kind: ItemKind; key: 'name' | 'uri' | 'uriTemplate' }> = {
  'tools/list': { items: 'tools', kind: 'tools', key: 'name' },
  'prompts/list': { items: 'prompts', kind: 'prompts', key: 'name' },
  'resources/list': { items: 'resources', kind: 'resources', key: 'uri' },
  'resources/templates/list': { items: 'resourceTemplates', kind: 'resources', key: 'uriTemplate' },
};
const ALLOWED_LIST: Verdict = { allowed: true, rule: 'list filtered by policy' };
const ALLOWED_ANYONE: Verdict = { allowed: true, rule: 'open to every principal' };
const NO_URI: Verdict = { allowed: true, rule: 'no uri: the upstream answers' };
/** Requests about one tool, prompt or resource: the guard judges them only as placed targets. */
const NAMED_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'completion/complete',
]);
const NEED_ROUTES: Need = { need: 'routes' };
const NEED_DEFINITION: Need = { need: 'definition' };

export class Guard {
  /** Filtered lists by the unfiltered items array they came from (a cache entry), then by grant. */
  private readonly filtered = new WeakMap<readonly unknown[], Map<string, unknown[]>>();
  /** What the pins said of each pinned tool when it was last seen or read, by the name /mcp gives it. */
  private readonly pinVerdicts = new Map<string, PinSeen>();
  private readonly pinMaxAgeMs: number;

  constructor(private readonly options: GuardOptions) {
    this.pinMaxAgeMs = options.pinMaxAgeMs ?? DEFAULT_PIN_MAX_AGE_MS;
  }

  /**
   * Whether the request may go ahead, or what is needed first. `listed` says the pinned tool's server was
   * just asked for its tools (`definitionsRead`): whatever that gave, the call is then judged.
   */
  judge(target: Target, message: JsonRpcRequest, grant: Grant, principal: Principal, listed = false): Verdict | Need {
    if (target.kind === 'tools') return this.judgeTool(target, message, grant, principal, listed);
    if (target.kind === 'prompts') return this.judgePrompt(target, message, grant);
    if (target.kind === 'resources') return this.judgeUri(target, message, grant);
    // A named request nothing placed (an edge built without a router) is refused, never let through unjudged.
    if (NAMED_METHODS.has(message.method)) return unplaced(message);
    // server/discover and subscriptions/listen: what they reveal is filtered elsewhere.
    return message.method in LISTS ? ALLOWED_LIST : ALLOWED_ANYONE;
  }

  /** The answer as this caller may see it: lists without what it may not see, marked private. */
  shape(server: string | undefined, method: string, response: JsonRpcResponse, grant: Grant): JsonRpcResponse {
    // One server's instructions may name what the caller may not see (/mcp's merge decides the same way).
    if (
      method === 'server/discover' &&
      server !== undefined &&
      'result' in response &&
      response.result.instructions !== undefined &&
      !grant.seesAll(server)
    ) {
      const { instructions, ...rest } = response.result;
      return { jsonrpc: '2.0', id: response.id, result: { ...rest, cacheScope: 'private' } };
    }
    const list = LISTS[method as ListMethod];
    if (!list || !('result' in response)) return response;
    const items = response.result[list.items];
    if (!Array.isArray(items)) return response;
    let byGrant = this.filtered.get(items);
    if (!byGrant) this.filtered.set(items, (byGrant = new Map()));
    const memoKey = `${server ?? ''}\0${grant.key}`;
    let kept = byGrant.get(memoKey);
    if (!kept) {
      kept = items.filter((item) => this.visible(server, list.kind, list.key, item, grant));
      byGrant.set(memoKey, kept);
    }
    // A fresh response: the one given may be a shared cache entry, or carry its pre-serialised text.
    return {
      jsonrpc: '2.0',
      id: response.id,
      result: { ...response.result, [list.items]: kept, cacheScope: 'private' },
    };
  }

  /**
   * Whether this caller sees a tool (`item`, by its /mcp name) as a tools/list would show it: search results
   * are filtered by it. Read-only: `item` is the search index's copy, which may be older than the list the
   * router last read, so it must never overwrite what that list said of a pinned tool (a stale copy that
   * still matches its pin would otherwise unpin a tool that changed, for every caller).
   */
  seesTool(item: Record<string, unknown>, grant: Grant): boolean {
    return this.visible(undefined, 'tools', 'name', item, grant, false);
  }

  private judgeTool(
    target: NamedTarget,
    message: JsonRpcRequest,
    grant: Grant,
    principal: Principal,
    listed: boolean,
  ): Verdict | Need {
    const { server, publicName: name } = target;
    if (server === undefined || name === undefined) return unknown(message, 'tool', target.given);
    const args = message.params?.arguments;
    const verdict = grant.allowsCall(server, name, { args, principal, tool: name, server });
    if (!grant.allows('tools', server, name).allowed) return unknown(message, 'tool', target.given, verdict.rule, name);
    // A name nobody offers gets the same words as a denied one, so a refusal says nothing of existence.
    if (!target.listed) return target.confirmed ? unknown(message, 'tool', target.given, undefined, name) : NEED_ROUTES;
    // A connect placeholder is the gateway's own tool, not the server's: there is nothing of the server's to pin.
    if (grant.pins(server, name) && !target.listed.placeholder) {
      const pin = this.freshPin(name);
      if (pin === undefined)
        return listed
          ? unknown(message, 'tool', target.given, "pinned tool not in its server's tools/list", name)
          : NEED_DEFINITION;
      if (pin === 'changed') return unknown(message, 'tool', target.given, 'pinned tool changed upstream', name);
    }
    if (!verdict.allowed) {
      // The tool is visible, so refusing it openly leaks nothing; the expression stays in the audit log.
      const policy = /^condition of policy (.*?) \(/.exec(verdict.rule)?.[1];
      const why =
        `Call refused by policy${policy ? ` ${policy}` : ''}: these arguments do not meet its conditions ` +
        `for ${String(target.given)}`;
      return {
        allowed: false,
        rule: verdict.rule,
        target: name,
        refusal: errorResponse(message.id, ErrorCode.InvalidParams, why),
      };
    }
    return { allowed: true, rule: verdict.rule, target: name };
  }

  /**
   * `server`'s tools as it listed them when asked at `readAt` (its own names), past every cache: each tool
   * this grant pins is judged against its pin (pinned on first sight), and calls are judged by that until
   * pinsMaxAgeMs after `readAt`. A pinned tool missing from them is refused until a read finds it.
   */
  definitionsRead(server: string, tools: readonly unknown[], grant: Grant, readAt: number): void {
    const prefix = this.options.prefixes.get(server) ?? server;
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== 'string') continue;
      const name = publicName(prefix, this.options.separator, tool.name);
      if (grant.pins(server, name))
        this.pinVerdicts.set(name, { verdict: this.options.pins.check(name, tool), readAt });
    }
  }

  /** The pins' word on a tool, from a definition read from its server at most pinsMaxAgeMs ago; else undefined. */
  private freshPin(name: string): PinVerdict | undefined {
    const seen = this.pinVerdicts.get(name);
    return seen !== undefined && Date.now() - seen.readAt <= this.pinMaxAgeMs ? seen.verdict : undefined;
  }

  private judgePrompt(target: NamedTarget, message: JsonRpcRequest, grant: Grant): Verdict | Need {
    const { server, publicName: name } = target;
    if (server === undefined || name === undefined) return unknown(message, 'prompt', target.given);
    const decision = grant.allows('prompts', server, name);
    if (!decision.allowed) return unknown(message, 'prompt', target.given, decision.rule, name);
    if (!target.listed)
      return target.confirmed ? unknown(message, 'prompt', target.given, undefined, name) : NEED_ROUTES;
    return { allowed: true, rule: decision.rule, target: name };
  }

  private judgeUri(target: UriTarget, message: JsonRpcRequest, grant: Grant): Verdict | Need {
    const given = target.uri;
    if (typeof given !== 'string') return NO_URI;
    // A ui:// URI is judged as its server names it, as on /servers/<name>/mcp; refusals repeat the given one.
    const uri = target.ownUri ?? given;
    const onMcp = target.endpoint === undefined;
    // Policy first, then the owner, so that a denied URI that exists and one that does not take the same
    // path (a URI nobody listed re-reads every list, and the time that takes would tell which exist):
    // a URI no server's rules let this caller read is refused before any lookup; one whose listed owner
    // denies it costs the same re-reading as one nobody lists.
    if (onMcp && !this.anyServerAllows(uri, grant))
      return unknownUri(message, given, grant.allows('resources', undefined, uri).rule);
    const owner = target.owner;
    const decision = grant.allows('resources', owner, uri);
    if (onMcp && !target.confirmed && (owner === undefined ? target.ambiguous === undefined : !decision.allowed))
      return NEED_ROUTES;
    // On /mcp a URI no upstream owns gets the same words as a denied one.
    if (decision.allowed && owner !== undefined) return { allowed: true, rule: decision.rule, target: given };
    return unknownUri(message, given, decision.allowed ? 'no server offers it' : decision.rule);
  }

  private anyServerAllows(uri: string, grant: Grant): boolean {
    for (const candidate of this.options.prefixes.keys())
      if (grant.allows('resources', candidate, uri).allowed) return true;
    return false;
  }

  /** `record`: whether `item` is a fresh upstream listing, whose pin verdict later calls are judged by. */
  private visible(
    server: string | undefined,
    kind: ItemKind,
    key: string,
    item: unknown,
    grant: Grant,
    record = true,
  ): boolean {
    if (!isObject(item)) return false;
    const value = item[key];
    if (typeof value !== 'string') return false;
    if (kind === 'resources') {
      // /mcp lists ui:// URIs (and templates) namespaced: judged as their server names them.
      const ui = server === undefined && isUiUri(value) ? ownerOfUiUri(value, this.heads()) : undefined;
      if (ui) return grant.allows('resources', ui.server, ui.uri).allowed;
      return grant.allows('resources', server ?? this.options.ownerOf(value), value).allowed;
    }
    const seen = this.named(server, value);
    if (!seen || !grant.allows(kind, seen.server, seen.name).allowed) return false;
    // A connect placeholder is the gateway's own (only on /mcp and its views): nothing of the server's to pin.
    if (kind === 'tools' && grant.pins(seen.server, seen.name) && !(server === undefined && carriesConnectMark(item))) {
      if (!record)
        return (
          this.pinVerdicts.get(seen.name)?.verdict !== 'changed' &&
          this.options.pins.peek(seen.name, item) !== 'changed'
        );
      const verdict = this.options.pins.check(seen.name, item);
      this.sawInList(seen.name, verdict);
      return verdict !== 'changed';
    }
    return true;
  }

  /**
   * A list showed a pinned tool; it may be a cached one, of unknown age. A change has the next call read
   * the definition from the server again; a match never makes an older verdict fresher.
   */
  private sawInList(name: string, verdict: PinVerdict): void {
    const seen = this.pinVerdicts.get(name);
    if (verdict === 'changed') this.pinVerdicts.set(name, { verdict, readAt: -Infinity });
    else if (seen === undefined) this.pinVerdicts.set(name, { verdict, readAt: -Infinity });
  }

  /** Every server with the head its names and ui:// URIs carry on /mcp. */
  private *heads(): Iterable<[server: string, head: string]> {
    for (const [server, prefix] of this.options.prefixes) yield [server, prefix + this.options.separator];
  }

  /**
   * The server and /mcp name of a listed item on this endpoint. Lists only: the cost is paid once per list
   * array and grant (memoised in shape), while requests are placed by the router's Map.
   */
  private named(server: string | undefined, name: string): { server: string; name: string } | undefined {
    const separator = this.options.separator;
    if (server !== undefined)
      return { server, name: publicName(this.options.prefixes.get(server) ?? server, separator, name) };
    for (const [owner, prefix] of this.options.prefixes) {
      if (
        name.length >= prefix.length + separator.length &&
        name.startsWith(prefix) &&
        name.startsWith(separator, prefix.length)
      )
        return { server: owner, name };
    }
    return undefined;
  }
}

export function isNeed(outcome: Verdict | Need): outcome is Need {
  return 'need' in outcome;
}

/** The answer for a URI the caller may not read: the same whether or not it exists. */
/** A named request that reached the guard without a target: a wiring mistake, so it fails closed. */
function unplaced(message: JsonRpcRequest): Verdict {
  return {
    allowed: false,
    rule: 'no router placed this request',
    refusal: errorResponse(
      message.id,
      ErrorCode.InternalError,
      `Internal error in mcp-gateway: ${message.method} reached policy without a target; see the gateway log`,
    ),
  };
}

function unknownUri(message: JsonRpcRequest, uri: string, rule: string): Verdict {
  return {
    allowed: false,
    rule,
    target: uri,
    refusal: errorResponse(message.id, ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri }),
  };
}

/** The answer for a name the caller may not see: the same whether or not it exists. */
function unknown(
  message: JsonRpcRequest,
  kind: 'tool' | 'prompt',
  name: unknown,
  rule = 'no server offers it',
  target?: string,
): Verdict {
  const shown = typeof name === 'string' ? name : textOf(name);
  return {
    allowed: false,
    rule,
    target: target ?? shown,
    refusal: errorResponse(message.id, ErrorCode.InvalidParams, `Unknown ${kind}: ${shown}`),
  };
}
