// bridge/openapi/: a REST API described by an OpenAPI document, served as MCP tools (@readme/openapi-parser,
// ajv). The wiring imports this face with import() for an `openapi:` server only, so none of it is loaded
// otherwise.
export { OpenApiUpstream } from './openapi-upstream.js';
