// src/search/: search mode's two tools (search_tools, call_tool) and the index behind them, kept in step with
// the aggregate. The index (MiniSearch) is loaded at the first search, inside this folder (tool-search.ts);
// from it this face gives only its type.
export { DEFAULT_LIMIT, MAX_LIMIT } from './limits.js';
export {
  CALL_TOOL,
  definitionOf,
  SEARCH_TOOL_DEFINITIONS,
  SEARCH_TOOLS,
  searchResult,
  toolError,
} from './search-tools.js';
export type { ToolIndex } from './tool-index.js';
export { ToolSearch } from './tool-search.js';
