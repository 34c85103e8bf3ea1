// Headers that carry one value: a second copy is an attack or a broken client, never something to merge.
// Node keeps only the first `Authorization` and joins repeated custom headers with ", " (so two
// `Mcp-Method` headers would read as "a, b" and two Authorizations as the first): the raw list is the only
// place a duplicate shows. The scan compares lengths first and allocates nothing for the usual spellings.

const SINGLE = ['authorization', 'mcp-protocol-version', 'mcp-method', 'mcp-name'] as const;
const CAPITALISED = ['Authorization', 'MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name'];
const LENGTHS = new Set(SINGLE.map((name) => name.length));

/** The first single-valued header that appears more than once (lower-case), or undefined. */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  let seen = 0; // one bit per entry of SINGLE
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!LENGTHS.has(name.length)) continue;
    const first = name.charCodeAt(0) | 0x20; // lower-cased ASCII letter
    if (first !== 0x61 /* a */ && first !== 0x6d /* m */) continue;
    const which = indexOf(name);
    if (which === -1) continue;
    const bit = 1 << which;
    if (seen & bit) return SINGLE[which];
    seen |= bit;
  }
  return undefined;
}

function indexOf(name: string): number {
  for (let k = 0; k < SINGLE.length; k++) {
    if (name === SINGLE[k] || name === CAPITALISED[k]) return k;
  }
  const lower = name.toLowerCase(); // unusual spellings only
  return (SINGLE as readonly string[]).indexOf(lower);
}
