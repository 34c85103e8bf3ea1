// Search mode's two tools, as a model reads them: `search_tools` finds the tools that fit a task among
// everything the caller may use, `call_tool` calls one of them by the name search_tools gave. Their
// definitions are the whole of what a host lists in search mode, so they say precisely what to send.
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './limits.js';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

/** What each result carries of a tool's definition: enough to call it right, nothing else. */
const DEFINITION_KEYS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

const toolDefinition: JsonObject = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The name to pass to call_tool.' },
    title: { type: 'string', description: 'A human-readable title, when the tool has one.' },
    description: { type: 'string', description: 'What the tool does.' },
    inputSchema: { type: 'object', description: 'JSON Schema of the arguments call_tool must pass.' },
    outputSchema: { type: 'object', description: "JSON Schema of the tool's structured result, when it declares one." },
    annotations: {
      type: 'object',
      description: 'Hints about the tool: readOnlyHint, destructiveHint, idempotentHint, openWorldHint.',
    },
  },
  required: ['name', 'inputSchema'],
};

export const SEARCH_TOOL_DEFINITIONS: readonly JsonObject[] = [
  {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      'Find the tools that can do a task. Many tools are available but not listed; describe what you want to do ' +
      '(for example "read a file", "create a GitHub issue", "query the database") and this returns the best ' +
      'matching tools, best first, each with its name, description and input schema. Then call one with call_tool. ' +
      'Search again with other words if nothing fits.',
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          description:
            'What the tool should do, in a few words: the task, the thing it acts on, or a tool name you expect.',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_LIMIT,
          default: DEFAULT_LIMIT,
          description: `How many tools to return at most (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        tools: {
          type: 'array',
          items: toolDefinition,
          description: 'The matching tools, best first; empty when none matches.',
        },
      },
      required: ['tools'],
    },
    annotations: {
      title: 'Search tools',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      'Call a tool that search_tools returned, by its exact name, with arguments that match its inputSchema. ' +
      "Returns that tool's own result unchanged (its content, structuredContent and isError). Only tools " +
      'search_tools can return may be called; any other name is answered as an unknown tool.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: "The tool's name exactly as search_tools gave it." },
        arguments: {
          type: 'object',
          description: "The tool's arguments, matching its inputSchema; {} or left out when it takes none.",
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
];

/** The part of a tool's definition a search result shows. */
export function definitionOf(tool: JsonObject): JsonObject {
  const shown: JsonObject = {};
  for (const key of DEFINITION_KEYS) if (tool[key] !== undefined) shown[key] = tool[key];
  return shown;
}

/** search_tools' result: the tools as structured content, and the same as JSON text for hosts that show only text. */
export function searchResult(tools: readonly JsonObject[]): JsonObject {
  const structuredContent = { tools };
  return {
    resultType: 'complete',
    content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
    structuredContent,
  };
}

/** A tool-level error the model can correct (wrong arguments to search_tools or call_tool). */
export function toolError(text: string): JsonObject {
  return { resultType: 'complete', content: [{ type: 'text', text }], isError: true };
}
