// How many hits search_tools gives: its own module, so the edge and the tool's definition read the limits
// without loading the index (MiniSearch), which a gateway loads at its first search (tool-search.ts).
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 50;
