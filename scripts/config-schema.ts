// Writes gateway.config.schema.json from the zod schema (npm run config-schema). Run it after changing
// src/config/config.ts; test/unit/config-schema.test.ts fails until the committed file matches.
import { writeFileSync } from 'node:fs';
import { CONFIG_SCHEMA_FILE, configJsonSchemaText } from '../src/config/schema.js';

writeFileSync(new URL(`../${CONFIG_SCHEMA_FILE}`, import.meta.url), configJsonSchemaText());
process.stdout.write(`wrote ${CONFIG_SCHEMA_FILE}\n`);
