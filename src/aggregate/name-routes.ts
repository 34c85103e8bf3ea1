// name ↔ (server, original name) for one kind of named item (tools or prompts) on /mcp. Filled from the
// list answers that pass through the gateway; routing a call is one Map lookup.
import type { JsonObject } from '../../protocol/jsonrpc.js';

export interface Route {
  server: string;
  name: string;
  /** The item as /mcp lists it: what a pinned tool's call is checked against without listing again. */
  definition?: JsonObject;
  /** A connect placeholder (connect-placeholder.ts): a real tool of the same name takes its place. */
  placeholder?: boolean;
}

export class NameRoutes {
  private readonly byPublic = new Map<string, Route>();

  /** Records a name; returns the other owner when the public name is already someone else's. */
  add(publicName: string, route: Route): Route | undefined {
    const existing = this.byPublic.get(publicName);
    if (existing && (existing.server !== route.server || existing.name !== route.name)) return existing;
    // One caller's placeholder never hides another caller's real tool of that name from the routes.
    if (existing && route.placeholder && !existing.placeholder) return undefined;
    this.byPublic.set(publicName, route);
    return undefined;
  }

  get(publicName: string): Route | undefined {
    return this.byPublic.get(publicName);
  }

  /** How many names each server has here (its own: a connect placeholder is not one of them). */
  countByServer(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const route of this.byPublic.values())
      if (!route.placeholder) counts.set(route.server, (counts.get(route.server) ?? 0) + 1);
    return counts;
  }

  /** Forgets every name of one server, e.g. when it announced that its list changed. */
  forgetServer(server: string): void {
    for (const [name, route] of this.byPublic) if (route.server === server) this.byPublic.delete(name);
  }
}
