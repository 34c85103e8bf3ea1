// The one place tests load the official MCP 2026-07-28 JSON Schema and example messages from: copies kept
// in test/fixtures/mcp-schema (see its README for the source), so a clone tests itself wherever it lives.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';

const REVISION = new URL('./fixtures/mcp-schema/2026-07-28/', import.meta.url);

/** The parsed 2026-07-28 schema.json. */
export const mcpSchema: Record<string, any> = JSON.parse(readFileSync(new URL('schema.json', REVISION), 'utf8'));

let ajv: Ajv2020 | undefined;
/**
 * ajv with the schema added, made at the first validation: every end-to-end file imports this module (through the
 * harness) and most validate nothing, and loading ajv and checking the schema against its meta-schema costs about
 * 0.15 s of CPU in each.
 */
function schemaAjv(): Ajv2020 {
  if (ajv) return ajv;
  const require = createRequire(import.meta.url);
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as { default: (ajv: Ajv2020) => void };
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(mcpSchema, 'mcp');
  return ajv;
}

/** The compiled validator of one `$defs` entry; throws on a name the schema does not define. */
export function schemaDef(def: string): ValidateFunction {
  const check = schemaAjv().getSchema(`mcp#/$defs/${def}`);
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
