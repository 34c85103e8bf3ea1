// Merged /mcp pages, kept as long as every part stays fresh (the page's ttlMs is the smallest of its
// parts') and no upstream announced a change. A hit costs no fan-out, no serialisation and no copy: the
// page is kept as UTF-8 bytes up to its ttlMs, which is appended with the time left.
import { LRUCache } from 'lru-cache';
import {
  SERIALIZED_RESULT,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcResponse,
  type PreSerialized,
} from '../../protocol/jsonrpc.js';

const MAX_PAGES = 1_000;

interface Page {
  result: JsonObject;
  /** The result as UTF-8 JSON without its ttlMs and closing brace. */
  head: Buffer;
  expiresAt: number;
}

export class MergedPages {
  private readonly pages = new LRUCache<string, Page>({ max: MAX_PAGES });

  constructor(private readonly now: () => number = Date.now) {}

  get(id: JsonRpcId, method: string, cursor: string, context: string | undefined): JsonRpcResponse | undefined {
    const now = this.now();
    const fresh = (page: Page | undefined) => (page && page.expiresAt > now ? page : undefined);
    const page =
      fresh(this.pages.get(key(method, cursor, undefined))) ??
      fresh(this.pages.get(key(method, cursor, context ?? '')));
    if (!page) return undefined;
    const ttlMs = page.expiresAt - now;
    const response: PreSerialized = { jsonrpc: '2.0', id, result: { ...page.result, ttlMs } };
    response[SERIALIZED_RESULT] = [page.head, `,"ttlMs":${ttlMs}}`];
    return response;
  }

  set(method: string, cursor: string, context: string | undefined, result: JsonObject): void {
    const ttlMs = result.ttlMs;
    if (typeof ttlMs !== 'number' || ttlMs <= 0) return;
    const { ttlMs: _, ...rest } = result;
    const page: Page = { result, head: Buffer.from(JSON.stringify(rest).slice(0, -1)), expiresAt: this.now() + ttlMs };
    // A private page is its caller's alone; a public one serves everyone.
    this.pages.set(key(method, cursor, result.cacheScope === 'public' ? undefined : (context ?? '')), page);
  }

  clear(): void {
    this.pages.clear();
  }
}

function key(method: string, cursor: string, context: string | undefined): string {
  return context === undefined ? `${method}\0${cursor}` : `${method}\0${cursor}\0${context}`;
}
