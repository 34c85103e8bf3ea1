// The one place tests load the official MCP 2026-07-28 JSON Schema and example messages from: copies kept
// in test/fixtures/mcp-schema (see its README for the source), so a clone tests itself wherever it lives.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const REVISION = new URL('./fixtures/mcp-schema/2026-07-28/', import.meta.url);

/** The parsed 2026-07-28 schema.json. */
export const mcpSchema: Record<string, any> = JSON.parse(readFileSync(new URL('schema.json', REVISION), 'utf8'));

// ajv-formats ships CommonJS; under ESM its default export may arrive wrapped.
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(mcpSchema, 'mcp');

/** The compiled validator of one `$defs` entry; throws on a name the schema does not define. */
export function schemaDef(def: string): ValidateFunction {
  const check = ajv.getSchema(`mcp#/$defs/${def}`);
  if (!check) throw new Error(`the 2026-07-28 schema defines no ${def}`);
  return check as ValidateFunction;
}

/** Problems found validating `value` as `def` (empty when valid). */
export function defProblems(def: string, value: unknown): string[] {
  const check = schemaDef(def);
  return check(value) ? [] : (check.errors ?? []).map((e) => `${def}${e.instancePath} ${e.message}`);
}

export interface OfficialExample {
  /** The schema type the example illustrates (its folder), e.g. `CallToolRequest`. */
  type: string;
  file: string;
  body: Record<string, any>;
}

/** The specification's example messages whose type passes `keep`, sorted by type and file. */
export function officialExamples(keep: (type: string) => boolean = () => true): OfficialExample[] {
  const root = new URL('examples/', REVISION);
  const found: OfficialExample[] = [];
  for (const type of readdirSync(root).filter(keep).sort()) {
    for (const file of readdirSync(new URL(`${type}/`, root))
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      found.push({ type, file, body: JSON.parse(readFileSync(new URL(`${type}/${file}`, root), 'utf8')) });
    }
  }
  return found;
}
