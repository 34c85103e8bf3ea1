// A full-text index over the tools /mcp lists, for search mode's `search_tools`.
//
// One index for the whole aggregate, kept in step with it server by server: `replace` swaps out exactly the
// documents one server contributes (nothing else is touched), `remove` forgets a server. The ranking is
// MiniSearch's BM25 over four fields — the public name split into words, the title, the description, and the
// parameters' names and descriptions — on stemmed words, every query word matched as a prefix and, when the index
// does not know it, with typo tolerance. Words are combined with OR (MiniSearch multiplies a document's score by how
// many query words it
// matched, so documents matching more words still come first): at 5,000 tools AND found the right tool in
// the top five for 39% of the bench's queries, OR for 81%. A short thesaurus (synonyms.ts) adds, at a lower
// weight, the words tools use for what people say ("folder" → directory); with it and stemming, 90%. Then
// four general changes, each kept only because the held-out queries (never tuned on) did no worse: a
// title's words that repeat the name are indexed once, a fuzzy match counts less, BM25 weighs field length
// more (see SEARCH_OPTIONS), and typos are looked for only in words the index does not know (for speed) —
// 90% on the tuned queries, 79% held out (from 75%).
// What a caller may see is applied by filtering the ranked results (`allowed`) before the limit, so there is
// never an index per principal. MiniSearch keeps only terms and the public name (the document id); the full
// definitions live in a Map beside it and are handed out as they were listed.
import MiniSearch, { type Query, type SearchOptions } from 'minisearch';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './limits.js';
import { expansion, thesaurus } from './synonyms.js';
import { processTerm, type ToolText, tokenize, toolText } from './tool-text.js';

export interface SearchHit {
  name: string;
  tool: JsonObject;
  score: number;
}

export interface SearchToolsOptions {
  /** How many hits; defaults to 10, capped at 50. */
  limit?: number;
  /** Whether the caller may see a public tool name; applied before the limit. */
  allowed?: (name: string) => boolean;
}

// A query longer than this is cut: typo-tolerant matching costs per query word, and a hostile caller could
// otherwise send a megabyte of words. 256 characters is several sentences.
const MAX_QUERY_CHARS = 256;

const FIELDS = ['name', 'title', 'description', 'params'] as const satisfies readonly (keyof ToolText)[];
type IndexedTool = ToolText & { id: string };

// Tuned on bench/search's labelled queries (see docs/development.md for the figures). Names weigh twice
// the rest; descriptions a little more than titles, which mostly repeat the name; parameters least.
const SEARCH_OPTIONS: SearchOptions = {
  boost: { name: 2, title: 1, description: 1.5, params: 0.5 },
  // Typos are looked for per search (ToolIndex.fuzzy): only for words the index does not know.
  // A fuzzy match counts 0.3 of an exact one (MiniSearch's default is 0.45): a three- or four-letter stem is
  // one edit from many real words ("get": set, git, let), and those near-misses crowded out exact matches.
  weights: { fuzzy: 0.3, prefix: 0.375 },
  // Prefixes match ("commit" finds "commits"), but not for one- or two-letter words, which would match half the index.
  prefix: (term) => term.length >= 3,
  combineWith: 'OR',
  // BM25 (MiniSearch's defaults: k 1.2, b 0.7, d 0.5). Descriptions run from four words to four paragraphs, so
  // length counts a little more (b 0.8): a word in a one-line description says more about the tool than the
  // same word somewhere in a manual. d, the flat credit a document gets for merely containing a word, is halved
  // (0.25) so that how often and where a word appears decides more of the order.
  bm25: { k: 1.2, b: 0.8, d: 0.25 },
};
/** A word the thesaurus brought in counts half as much as a word the caller wrote. */
const SYNONYM_WEIGHT = 0.5;
const synonymBoost = () => SYNONYM_WEIGHT;
const WORDS = thesaurus(processTerm);

export class ToolIndex {
  private readonly engine = new MiniSearch<IndexedTool>({
    idField: 'id',
    fields: [...FIELDS],
    storeFields: [],
    tokenize,
    processTerm,
    searchOptions: SEARCH_OPTIONS,
  });
  /** Public name → the definition as listed. */
  private readonly tools = new Map<string, JsonObject>();
  /** Public name → the server that contributed it. */
  private readonly ownerOf = new Map<string, string>();
  /** Server → the public names it contributed. */
  private readonly namesOf = new Map<string, Set<string>>();
  /** Every indexed term, with how many documents hold it. */
  private readonly vocabulary = new Map<string, number>();
  /**
   * Typo tolerance, for the words the index does not know: one edit per five letters, and one from three
   * letters up, because terms are stems by now ("isues" is "isu", "issues" is "issu"); one- and two-letter
   * words must be spelt right. A word the index knows is taken as meant: looking for its near neighbours
   * (get: set, git, let) cost most of a search's time and ranked near-misses among exact matches.
   */
  private readonly fuzzy = (term: string): number | false =>
    term.length >= 3 && !this.vocabulary.has(term) ? 0.2 : false;

  /**
   * Replaces everything one server contributes (its tools as /mcp lists them: public names). Incremental: only that
   * server's documents are removed and re-added.
   */
  replace(server: string, tools: readonly JsonObject[]): void {
    this.remove(server);
    if (!Array.isArray(tools)) return;
    const names = new Set<string>();
    for (const tool of tools) {
      const name = typeof tool?.name === 'string' ? tool.name : undefined;
      // Unnamed, listed twice, or a public name another server already has: like the aggregate's routes,
      // the first owner keeps a name.
      if (!name || this.ownerOf.has(name)) continue;
      names.add(name);
      this.tools.set(name, tool);
      this.ownerOf.set(name, server);
      const text = toolText(name, tool);
      this.engine.add({ id: name, ...text });
      this.count(text, 1);
    }
    if (names.size > 0) this.namesOf.set(server, names);
  }

  /** Forgets a server (removed by a reload). */
  remove(server: string): void {
    const names = this.namesOf.get(server);
    if (!names) return;
    for (const name of names) this.drop(name);
    this.namesOf.delete(server);
  }

  /**
   * Best matches first; `allowed` filters by public tool name BEFORE limit is applied (per-principal view by filtering,
   * never an index per principal). limit defaults to 10, capped at 50.
   */
  search(query: string, options: SearchToolsOptions = {}): SearchHit[] {
    if (typeof query !== 'string' || this.tools.size === 0) return [];
    const limit = clampLimit(options.limit);
    const allowed = options.allowed;
    const results = this.engine.search(
      withSynonyms(query.slice(0, MAX_QUERY_CHARS)),
      allowed ? { fuzzy: this.fuzzy, filter: (result) => allowed(result.id) } : { fuzzy: this.fuzzy },
    );
    const hits: SearchHit[] = [];
    for (const result of results) {
      if (hits.length === limit) break;
      const tool = this.tools.get(result.id);
      if (tool) hits.push({ name: result.id, tool, score: result.score });
    }
    return hits;
  }

  /** The full listed definition by public name (for call_tool), or undefined. */
  get(name: string): JsonObject | undefined {
    return this.tools.get(name);
  }

  get size(): number {
    return this.tools.size;
  }

  private drop(name: string): void {
    const tool = this.tools.get(name);
    if (tool) this.count(toolText(name, tool), -1);
    // discard() needs only the id; MiniSearch cleans its postings lazily (on search and by auto-vacuum).
    this.engine.discard(name);
    this.tools.delete(name);
    this.ownerOf.delete(name);
  }

  /** Counts one document's terms in or out of the vocabulary (each term once per document, as BM25 does). */
  private count(text: ToolText, by: 1 | -1): void {
    const terms = new Set<string>();
    for (const field of FIELDS) {
      for (const word of tokenize(text[field])) {
        const term = processTerm(word);
        if (term) terms.add(term);
      }
    }
    for (const term of terms) {
      const held = (this.vocabulary.get(term) ?? 0) + by;
      if (held > 0) this.vocabulary.set(term, held);
      else this.vocabulary.delete(term);
    }
  }
}

/** The query, or the query OR (at a lower weight) the words the thesaurus relates to its words. */
function withSynonyms(query: string): Query {
  const terms: string[] = [];
  for (const word of tokenize(query)) {
    const term = processTerm(word);
    if (term) terms.push(term);
  }
  const extra = expansion(terms, WORDS);
  return extra
    ? {
        combineWith: 'OR',
        queries: [query, { queries: [extra], boostTerm: synonymBoost, fuzzy: false, prefix: false }],
      }
    : query;
}

function clampLimit(limit: number | undefined): number {
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 1) return DEFAULT_LIMIT;
  return Math.min(Math.floor(limit), MAX_LIMIT);
}
