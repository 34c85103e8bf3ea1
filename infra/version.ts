// The gateway's own name and version, read from package.json (found from infra/ and from dist/infra/ alike).
import { readFileSync } from 'node:fs';

/**
 * The npm package's name. The product and its command are `mcp-gateway`, but that npm name belongs to another
 * package, so this one is published as stateless-mcp-gateway (docs/development.md, "The package").
 */
export const PACKAGE_NAME = 'stateless-mcp-gateway';

function readVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === PACKAGE_NAME && pkg.version) return pkg.version;
    } catch {
      // try the next place
    }
  }
  return '0.0.0';
}

export const GATEWAY_INFO = { name: 'mcp-gateway', version: readVersion() };
