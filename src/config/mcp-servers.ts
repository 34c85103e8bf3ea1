// The server lists MCP hosts already have, accepted as they are: Claude Desktop, Claude Code and Cursor write
// `mcpServers: { name: { command, args, env } | { url, headers } }` (with an optional `type`), VS Code writes
// `servers: { name: { type: "stdio" | "http", … } }`. Both are rewritten here, before validation, into the
// gateway's own `servers:` entries, so the schema and the core never learn of a second spelling.

/** The `type` values hosts write, and the gateway transport each one means. */
export const HOST_TYPES: Readonly<Record<string, 'stdio' | 'http' | 'sse'>> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  sse: 'sse',
};

/** Keys hosts keep for themselves (what they approve, how they start a server): the gateway has no such setting. */
export const HOST_ONLY_KEYS: Readonly<Record<string, string>> = {
  autoApprove:
    "tool approval is the host's (Cline, Claude Desktop) and stays there; remove it here, or limit tools with " +
    'policies:',
  alwaysAllow: "tool approval is the host's (Roo Code) and stays there; remove it here, or limit tools with policies:",
  envFile: "VS Code reads it; give the variables in env:, or inheritEnv: to pass the gateway's own",
  disabledTools: "the host hides those tools; hide them here with a policy's deny.tools",
};

export interface HostServers {
  /** The config with `mcpServers` merged into `servers`; the input itself when there was nothing to do. */
  raw: unknown;
  /** Problems worded for the user, with the key path they wrote. */
  problems: string[];
  /** Names that came from `mcpServers`, so later messages can name the map the user wrote them in. */
  fromMcpServers: Set<string>;
}

/** Rewrites hosts' server maps into the gateway's `servers:`. Runs before ${VAR} expansion. */
export function adoptHostServers(raw: unknown): HostServers {
  const fromMcpServers = new Set<string>();
  const problems: string[] = [];
  if (!isObject(raw)) return { raw, problems, fromMcpServers };
  const { mcpServers, ...rest } = raw;
  const servers: Record<string, unknown> = isObject(rest.servers) ? { ...rest.servers } : {};
  for (const [name, entry] of Object.entries(servers)) {
    if (!isObject(entry) || !('type' in entry)) continue;
    if (entry.disabled === true) delete servers[name];
    else servers[name] = adoptEntry(`servers.${name}`, entry, problems);
  }
  if (mcpServers === undefined)
    return { raw: rest.servers === undefined ? raw : { ...rest, servers }, problems, fromMcpServers };
  if (!isObject(mcpServers)) {
    problems.push(
      'mcpServers: must be a map of server names to { command, args, env } or { url, headers }, as Claude Desktop ' +
        'and Cursor write it',
    );
    return { raw, problems, fromMcpServers };
  }
  for (const [name, entry] of Object.entries(mcpServers)) {
    if (name in servers) {
      problems.push(
        `mcpServers.${name}: servers.${name} exists too; rename one of them (each name is served at ` +
          `/servers/<name>/mcp)`,
      );
      continue;
    }
    if (isObject(entry) && entry.disabled === true) continue;
    fromMcpServers.add(name);
    servers[name] = isObject(entry) ? adoptEntry(`mcpServers.${name}`, entry, problems) : entry;
  }
  return { raw: { ...rest, servers }, problems, fromMcpServers };
}

/** Names a problem the schema found in a server by the map the user wrote it in. */
export function renameProblem(problem: string, fromMcpServers: Set<string>): string {
  const match = /^servers\.([A-Za-z0-9_-]+)(?=[.:])/.exec(problem);
  return match && fromMcpServers.has(match[1]!) ? `mcp${problem[0]!.toUpperCase()}${problem.slice(1)}` : problem;
}

function adoptEntry(at: string, entry: Record<string, unknown>, problems: string[]): Record<string, unknown> {
  const { type, disabled: _disabled, ...server } = entry;
  // Cursor and VS Code write ${env:NAME}; the gateway's own form is ${NAME}.
  const adopted = hostVariables(server) as Record<string, unknown>;
  if (type === undefined) return adopted;
  const transport = typeof type === 'string' ? HOST_TYPES[type] : undefined;
  if (!transport) {
    problems.push(
      `${at}.type: must be one of ${Object.keys(HOST_TYPES)
        .map((t) => JSON.stringify(t))
        .join(', ')} (or left out)`,
    );
    return adopted;
  }
  return { ...adopted, transport };
}

function hostVariables(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1}');
  if (Array.isArray(value)) return value.map(hostVariables);
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, hostVariables(item)]));
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
