// Applies a principal's grant to one endpoint's traffic: a request for something outside the allow-list
// is answered exactly as a request for something that does not exist, and lists lose what the caller may
// not see. Decisions are made in policy/; this module only knows where names and servers sit in MCP
// messages. Names are judged as /mcp shows them (`<prefix><sep><name>`) on every endpoint, so one rule
// covers a tool whichever way it is reached.
import type { Grant, ItemKind } from '../../policy/allow-list.js';
import type { PinStore, PinVerdict } from '../../policy/pins.js';
import type { Principal } from '../../policy/principal.js';
import { publicName } from '../aggregate/public-names.js';
import { ErrorCode, errorResponse, isObject, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { ListMethod } from '../protocol/mcp.js';

export interface GuardOptions {
  /** Each server's prefix on /mcp, in config order. */
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  /** The upstream that owns a resource URI or template on /mcp, as the last lists said. */
  ownerOf(uri: string): string | undefined;
  /** The same, reading the lists again when they did not say. */
  resolveOwner(uri: string): Promise<string | undefined>;
  /** Reads the resource lists again, as resolveOwner does for a URI nobody listed. */
  refreshOwners?(): Promise<void>;
  /** Whether some upstream lists a tool or prompt by this /mcp name (reading the lists again if needed). */
  knows(kind: 'tools' | 'prompts', name: string): Promise<boolean>;
  pins: PinStore;
}

export interface Verdict {
  allowed: boolean;
  rule: string;
  /** The name or URI the request is about, as the caller gave it. */
  target?: string;
  /** The answer to send instead of forwarding, when refused. */
  refusal?: JsonRpcResponse;
}

const LISTS: Record<ListMethod, { items: string; kind: ItemKind; key: 'name' | 'uri' | 'uriTemplate' }> = {
  'tools/list': { items: 'tools', kind: 'tools', key: 'name' },
  'prompts/list': { items: 'prompts', kind: 'prompts', key: 'name' },
  'resources/list': { items: 'resources', kind: 'resources', key: 'uri' },
  'resources/templates/list': { items: 'resourceTemplates', kind: 'resources', key: 'uriTemplate' },
};
const ALLOWED_LIST: Verdict = { allowed: true, rule: 'list filtered by policy' };
const ALLOWED_ANYONE: Verdict = { allowed: true, rule: 'open to every principal' };

export class PolicyGuard {
  /** Filtered lists by the unfiltered items array they came from (a cache entry), then by grant. */
  private readonly filtered = new WeakMap<readonly unknown[], Map<string, unknown[]>>();
  /** What the pins said of each pinned tool when it was last listed, by the name /mcp gives it. */
  private readonly pinVerdicts = new Map<string, PinVerdict>();

  constructor(private readonly options: GuardOptions) {
  }

  /**
   * Whether the request may go ahead. `server` is the endpoint's upstream, undefined on /mcp.
   * `findTool` lists tools through the endpoint when a pinned tool is called before it was ever listed.
   */
  async check(server: string | undefined, message: JsonRpcRequest, grant: Grant, principal: Principal, findTool: (name: string) => Promise<void>): Promise<Verdict> {
    const params = message.params ?? {};
    switch (message.method) {
      case 'tools/call': {
        const seen = this.named(server, params.name);
        if (!seen) return this.unknown(message, 'tool', params.name);
        const verdict = grant.allowsCall(seen.server, seen.name, { args: params.arguments, principal, tool: seen.name, server: seen.server });
        if (!grant.allows('tools', seen.server, seen.name).allowed) return this.unknown(message, 'tool', params.name, verdict.rule, seen.name);
        // A name nobody offers gets the same words as a denied one, so a refusal says nothing of existence.
        if (!(await this.options.knows('tools', seen.name))) return this.unknown(message, 'tool', params.name, undefined, seen.name);
        if (grant.pins(seen.server, seen.name)) {
          if (!this.pinVerdicts.has(seen.name)) await findTool(seen.name);
          if (this.pinVerdicts.get(seen.name) === 'changed') return this.unknown(message, 'tool', params.name, 'pinned tool changed upstream', seen.name);
        }
        if (!verdict.allowed) {
          // The tool is visible, so refusing it openly leaks nothing; the expression stays in the audit log.
          const policy = /^condition of policy (.*?) \(/.exec(verdict.rule)?.[1];
          return {
            allowed: false,
            rule: verdict.rule,
            target: seen.name,
            refusal: errorResponse(message.id, ErrorCode.InvalidParams, `Call refused by policy${policy ? ` ${policy}` : ''}: these arguments do not meet its conditions for ${String(params.name)}`),
          };
        }
        return { allowed: true, rule: verdict.rule, target: seen.name };
      }
      case 'prompts/get':
        return this.judgeNamed(message, server, 'prompts', params.name, grant);
      case 'resources/read':
        return this.judgeUri(message, server, params.uri, grant);
      case 'completion/complete': {
        const ref = isObject(params.ref) ? params.ref : {};
        if (ref.type === 'ref/prompt') return this.judgeNamed(message, server, 'prompts', ref.name, grant);
        return this.judgeUri(message, server, ref.uri, grant);
      }
      case 'tools/list':
      case 'prompts/list':
      case 'resources/list':
      case 'resources/templates/list':
        return ALLOWED_LIST;
      default:
        return ALLOWED_ANYONE; // server/discover and subscriptions/listen: what they reveal is filtered elsewhere
    }
  }

  /** The answer as this caller may see it: lists without what it may not see, marked private. */
  shape(server: string | undefined, method: string, response: JsonRpcResponse, grant: Grant): JsonRpcResponse {
    // One server's instructions may name what the caller may not see (/mcp's merge decides the same way).
    if (method === 'server/discover' && server !== undefined && 'result' in response && response.result.instructions !== undefined && !grant.seesAll(server)) {
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
    return { jsonrpc: '2.0', id: response.id, result: { ...response.result, [list.items]: kept, cacheScope: 'private' } };
  }

  private visible(server: string | undefined, kind: ItemKind, key: string, item: unknown, grant: Grant): boolean {
    if (!isObject(item)) return false;
    const value = item[key];
    if (typeof value !== 'string') return false;
    if (kind === 'resources') return grant.allows('resources', server ?? this.options.ownerOf(value), value).allowed;
    const seen = this.named(server, value);
    if (!seen || !grant.allows(kind, seen.server, seen.name).allowed) return false;
    if (kind === 'tools' && grant.pins(seen.server, seen.name)) {
      const verdict = this.options.pins.check(seen.name, item);
      this.pinVerdicts.set(seen.name, verdict);
      return verdict !== 'changed';
    }
    return true;
  }

  /** The server and /mcp name of a tool or prompt name as the caller gave it on this endpoint. */
  private named(server: string | undefined, name: unknown): { server: string; name: string } | undefined {
    if (typeof name !== 'string') return undefined;
    if (server !== undefined) return { server, name: publicName(this.options.prefixes.get(server) ?? server, this.options.separator, name) };
    // Read from the live prefixes: a reload may add servers or change prefixes.
    const separator = this.options.separator;
    for (const [owner, prefix] of this.options.prefixes) {
      if (name.length >= prefix.length + separator.length && name.startsWith(prefix) && name.startsWith(separator, prefix.length)) return { server: owner, name };
    }
    return undefined;
  }

  private async judgeNamed(message: JsonRpcRequest, server: string | undefined, kind: 'prompts', name: unknown, grant: Grant): Promise<Verdict> {
    const seen = this.named(server, name);
    if (!seen) return this.unknown(message, 'prompt', name);
    const decision = grant.allows(kind, seen.server, seen.name);
    if (!decision.allowed) return this.unknown(message, 'prompt', name, decision.rule, seen.name);
    if (!(await this.options.knows(kind, seen.name))) return this.unknown(message, 'prompt', name, undefined, seen.name);
    return { allowed: true, rule: decision.rule, target: seen.name };
  }

  private async judgeUri(message: JsonRpcRequest, server: string | undefined, uri: unknown, grant: Grant): Promise<Verdict> {
    if (typeof uri !== 'string') return { allowed: true, rule: 'no uri: the upstream answers' };
    // Policy first, then the owner, so that a denied URI that exists and one that does not take the same
    // path (a URI nobody listed re-reads every list, and the time that takes would tell which exist):
    // a URI no server's rules let this caller read is refused before any lookup; one whose listed owner
    // denies it costs the same re-reading as one nobody lists.
    if (server === undefined && !this.anyServerAllows(uri, grant)) return this.unknownUri(message, uri, grant.allows('resources', undefined, uri).rule);
    const owner = server ?? (await this.options.resolveOwner(uri));
    const decision = grant.allows('resources', owner, uri);
    if (server === undefined && owner !== undefined && !decision.allowed) await this.options.refreshOwners?.();
    // On /mcp a URI no upstream owns gets the same words as a denied one.
    if (decision.allowed && owner !== undefined) return { allowed: true, rule: decision.rule, target: uri };
    return this.unknownUri(message, uri, decision.allowed ? 'no server offers it' : decision.rule);
  }

  private anyServerAllows(uri: string, grant: Grant): boolean {
    for (const candidate of this.options.prefixes.keys()) if (grant.allows('resources', candidate, uri).allowed) return true;
    return false;
  }

  /** The answer for a URI the caller may not read: the same whether or not it exists. */
  private unknownUri(message: JsonRpcRequest, uri: string, rule: string): Verdict {
    return { allowed: false, rule, target: uri, refusal: errorResponse(message.id, ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri }) };
  }

  /** The answer for a name the caller may not see: the same whether or not it exists. */
  private unknown(message: JsonRpcRequest, kind: 'tool' | 'prompt', name: unknown, rule = 'no server offers it', target?: string): Verdict {
    const shown = typeof name === 'string' ? name : String(name);
    return {
      allowed: false,
      rule,
      target: target ?? shown,
      refusal: errorResponse(message.id, ErrorCode.InvalidParams, `Unknown ${kind}: ${shown}`),
    };
  }
}
