// STAND-IN, to be replaced at merge by the real index (MiniSearch, built in the `search` worktree) with the
// same path and interface. It scores by plain substring matches so the catalog branch can build and test
// its endpoints; nothing outside this file depends on how it ranks, only on the interface below.
import type { JsonObject } from '../protocol/jsonrpc.js';

export interface SearchHit {
  name: string;
  tool: JsonObject;
  score: number;
}

export interface SearchOptions {
  limit?: number;
  /** Applied before the limit, so a caller's hidden tools never take a place in its results. */
  allowed?: (name: string) => boolean;
}

export class ToolIndex {
  private readonly byServer = new Map<string, Map<string, JsonObject>>();
  private readonly byName = new Map<string, JsonObject>();

  /** One server's tools (names as /mcp shows them), replacing what it had. */
  replace(server: string, tools: readonly JsonObject[]): void {
    this.remove(server);
    const own = new Map<string, JsonObject>();
    for (const tool of tools) {
      if (typeof tool.name !== 'string') continue;
      own.set(tool.name, tool);
      this.byName.set(tool.name, tool);
    }
    this.byServer.set(server, own);
  }

  remove(server: string): void {
    const own = this.byServer.get(server);
    if (!own) return;
    for (const name of own.keys()) this.byName.delete(name);
    this.byServer.delete(server);
  }

  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const terms = query
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
    if (terms.length === 0) return [];
    const hits: SearchHit[] = [];
    for (const [name, tool] of this.byName) {
      if (options.allowed && !options.allowed(name)) continue;
      const score = scoreOf(terms, name, tool);
      if (score > 0) hits.push({ name, tool, score });
    }
    hits.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1));
    return hits.slice(0, options.limit ?? 10);
  }

  get(name: string): JsonObject | undefined {
    return this.byName.get(name);
  }

  get size(): number {
    return this.byName.size;
  }
}

function scoreOf(terms: readonly string[], name: string, tool: JsonObject): number {
  const title = typeof tool.title === 'string' ? tool.title.toLowerCase() : '';
  const description = typeof tool.description === 'string' ? tool.description.toLowerCase() : '';
  const schema = JSON.stringify(tool.inputSchema ?? '').toLowerCase();
  const lowered = name.toLowerCase();
  let score = 0;
  for (const term of terms) {
    if (lowered.includes(term)) score += 3;
    if (title.includes(term)) score += 2;
    if (description.includes(term)) score += 1;
    if (schema.includes(term)) score += 0.5;
  }
  return score;
}
