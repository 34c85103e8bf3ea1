// The searchable text of one tool definition, and how that text (and a query) becomes terms.
// Definitions come from untrusted upstreams: every field is read defensively (a non-string description, an
// inputSchema that is an array or absent, a property that is null are all simply left out), and every piece
// of text is cut to a bound so one huge definition can neither bloat the index nor slow a search.
import { stemmer } from 'stemmer';
import type { JsonObject } from '../../protocol/jsonrpc.js';

/** The fields the index searches, as plain strings. */
export interface ToolText {
  /** The public name; the tokenizer splits it into words: `github__create_issue` → github create issue. */
  name: string;
  /**
   * `title`, else `annotations.title` (the older spelling), less the words the name already has: a title mostly
   * repeats the name ("List issues" for list_issues), and indexed whole it would count those words twice.
   */
  title: string;
  description: string;
  /** Parameter names and their descriptions from inputSchema.properties, one level deep. */
  params: string;
}

const MAX_FIELD_CHARS = 4_000;
const MAX_PARAMS = 64;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value.slice(0, MAX_FIELD_CHARS) : '');

function titleOf(tool: JsonObject): string {
  const own = text(tool.title);
  if (own) return own;
  return isObject(tool.annotations) ? text(tool.annotations.title) : '';
}

function paramsOf(tool: JsonObject): string {
  const schema = tool.inputSchema;
  if (!isObject(schema) || !isObject(schema.properties)) return '';
  const parts: string[] = [];
  let count = 0;
  for (const [param, spec] of Object.entries(schema.properties)) {
    if (++count > MAX_PARAMS) break;
    parts.push(param);
    if (isObject(spec)) parts.push(text(spec.description));
  }
  return parts.join(' ').slice(0, MAX_FIELD_CHARS);
}

export function toolText(publicName: string, tool: JsonObject): ToolText {
  return {
    name: publicName,
    title: newWords(titleOf(tool), publicName),
    description: text(tool.description),
    params: paramsOf(tool),
  };
}

/** The words of `title` whose terms `name` does not have, in order. */
function newWords(title: string, name: string): string {
  if (!title) return '';
  const known = new Set<string | null>();
  for (const word of tokenize(name)) known.add(processTerm(word));
  return tokenize(title)
    .filter((word) => !known.has(processTerm(word)))
    .join(' ');
}

// Letters and digits make words; everything else (`_`, `-`, `.`, `/`, spaces) separates them.
const WORD = /[\p{L}\p{N}]+/gu;
// camelCase and PascalCase boundaries: `createIssue` → create Issue, `HTTPServer` → HTTP Server.
const CAMEL = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/** Splits text into words, camelCase included. The same function reads definitions and queries. */
export function tokenize(input: string): string[] {
  const words: string[] = [];
  for (const match of input.matchAll(WORD)) {
    const word = match[0];
    if (word.length > 1 && CAMEL.test(word)) words.push(...word.split(CAMEL));
    else words.push(word);
  }
  return words;
}

// Words that carry no meaning about what a tool does; leaving them out keeps the index smaller and stops an
// OR query ("list the files in a folder") from rewarding every description that says "the" and "a".
const STOP_WORDS = new Set(
  (
    'a an and are as at be by can for from has have how i if in into is it its me my of on or our so such than that ' +
    'the their them then there these this those to use used uses using via was we what when where which while who ' +
    'will with would you your'
  ).split(' '),
);

/**
 * Lower-cases and stems a word ("branches", "branching" → "branch"; Porter's stemmer, from the `stemmer`
 * package), and drops stop words and very long words (hashes, base64) that nobody searches for.
 */
export function processTerm(term: string): string | null {
  if (term.length > 40) return null;
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}
