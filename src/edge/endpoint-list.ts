// The MCP paths a 404 may name to one caller: only those it may use. A server's endpoint when its grant
// reaches the server; a profile's when the profile shows something of a server the grant reaches (a
// profile is a view over /mcp, so it is no wider than what the caller reaches there). Without policies
// (no grant) every path. Refusals only: nothing here runs on a served request.
import type { Grant } from '../../policy/allow-list.js';
import type { EdgeContext } from './call.js';

export function pathsFor(edge: EdgeContext, grant: Grant | undefined): string[] {
  const paths = edge.paths();
  if (grant === undefined) return paths;
  return paths.filter((path) => {
    if (path.startsWith('/servers/')) return grant.reaches(path.slice('/servers/'.length, -'/mcp'.length));
    if (path.startsWith('/profiles/'))
      return profileUsable(edge, grant, path.slice('/profiles/'.length, -'/mcp'.length));
    return true;
  });
}

function profileUsable(edge: EdgeContext, grant: Grant, name: string): boolean {
  const profile = edge.viewOf?.(name)?.view;
  const router = edge.router;
  if (profile === undefined || router === undefined) return false;
  for (const server of edge.upstreams.keys()) {
    if (!grant.reaches(server)) continue;
    const shown = profile.shownOfHead(router.headOf(server));
    if (shown.tools || shown.prompts || shown.resources) return true;
  }
  return false;
}
