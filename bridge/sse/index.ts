// bridge/sse/: a remote server of the 2024-11-05 HTTP+SSE transport (`transport: sse`), and the probe that
// tells such a server apart (which the HTTP upstream asks when a Streamable HTTP POST is refused). Loaded with
// the remote servers only: the wiring imports this face with import().
export { speaksHttpSse } from './sse-connection.js';
export { SseUpstream } from './sse-upstream.js';
