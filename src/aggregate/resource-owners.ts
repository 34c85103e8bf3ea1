// Which upstream owns a resource URI on /mcp: the exact URIs of the last resources/list answers first,
// then the URI templates of the last resources/templates/list answers.

interface Template {
  server: string;
  template: string;
  pattern: RegExp;
}

export type Owner = { server: string } | { ambiguous: string[] } | undefined;

export class ResourceOwners {
  private readonly exact = new Map<string, Set<string>>();
  private templates: Template[] = [];

  addResource(uri: string, server: string): void {
    let owners = this.exact.get(uri);
    if (!owners) this.exact.set(uri, (owners = new Set()));
    owners.add(server);
  }

  /**
   * Records a template; false when it cannot be used to route, because its fixed part names no scheme (a
   * template like `{+uri}` would capture every other server's URIs).
   */
  addTemplate(template: string, server: string): boolean {
    const head = template.slice(0, template.search(/\{|$/));
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(head)) return false;
    if (!this.templates.some((t) => t.server === server && t.template === template)) {
      this.templates.push({ server, template, pattern: templatePattern(template) });
    }
    return true;
  }

  /** Forgets one server's URIs (its first page is being read again, or it announced a change). */
  forgetResources(server: string): void {
    for (const [uri, owners] of this.exact) {
      owners.delete(server);
      if (owners.size === 0) this.exact.delete(uri);
    }
  }

  forgetTemplates(server: string): void {
    this.templates = this.templates.filter((t) => t.server !== server);
  }

  forgetServer(server: string): void {
    this.forgetResources(server);
    this.forgetTemplates(server);
  }

  owner(uri: string): Owner {
    const exact = this.exact.get(uri);
    if (exact) return pick([...exact]);
    // A template string itself (completion/complete's ref/resource) belongs to whoever listed it.
    const servers = new Set<string>();
    for (const t of this.templates) if (t.template === uri || t.pattern.test(uri)) servers.add(t.server);
    return pick([...servers]);
  }
}

function pick(servers: string[]): Owner {
  if (servers.length === 0) return undefined;
  return servers.length === 1 ? { server: servers[0]! } : { ambiguous: servers.sort() };
}

/** RFC 6570 template → anchored RegExp: `{x}` is one path segment, `{+x}`/`{#x}` any text, others optional. */
export function templatePattern(template: string): RegExp {
  let source = '^';
  let last = 0;
  for (const match of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    source += escapeRegExp(template.slice(last, match.index));
    const operator = match[1];
    if (operator === '+' || operator === '#') source += '.*';
    else if (operator === '') source += '[^/?#]*';
    else source += '[^#]*'; // path, query and fragment expansions carry their own punctuation
    last = match.index! + match[0].length;
  }
  return new RegExp(`${source}${escapeRegExp(template.slice(last))}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
