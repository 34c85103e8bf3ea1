// bridge/stdio/: a local MCP server as a child process on stdin/stdout, supervised and restarted.
export { StdioUpstream } from './stdio-upstream.js';
export type { StdioUpstreamConfig } from './stdio-upstream.js';
