// Whether a redacted result still satisfies its tool's outputSchema. A marker is a string, so a string field
// stays a string, but a `pattern`, `format`, `enum` or `maxLength` may refuse it, and a validating client
// (the SDKs validate structuredContent) would then reject the whole answer. Such a redaction is refused
// instead (docs/guardrails.md). Ajv (JSON Schema 2020-12, the spec's default dialect, with formats) is loaded on
// the first redaction that needs the check; each schema is compiled once per definition object.
import type { ValidateFunction } from 'ajv';

type Validator = (value: unknown) => boolean;

let ajv: { compile(schema: object): ValidateFunction } | undefined;
/** null: the schema did not compile (then nothing is refused for it: the server's own schema is wrong). */
const compiled = new WeakMap<object, Validator | null>();

async function loadAjv(): Promise<NonNullable<typeof ajv>> {
  if (ajv !== undefined) return ajv;
  const [{ Ajv2020 }, formats] = await Promise.all([import('ajv/dist/2020.js'), import('ajv-formats')]);
  // ajv-formats ships CommonJS; under ESM its default export may arrive wrapped.
  const wrapped = formats.default as unknown as { default?: (ajv: unknown) => void };
  const addFormats = wrapped.default ?? (formats.default as unknown as (ajv: unknown) => void);
  const instance = new Ajv2020({ strict: false, allErrors: false });
  addFormats(instance);
  ajv = instance;
  return instance;
}

async function validatorOf(schema: object): Promise<Validator | null> {
  const known = compiled.get(schema);
  if (known !== undefined) return known;
  const instance = await loadAjv();
  let validator: Validator | null;
  try {
    const validate = instance.compile(schema);
    validator = (value) => validate(value) === true;
  } catch {
    validator = null;
  }
  compiled.set(schema, validator);
  return validator;
}

/**
 * Why the redacted structuredContent may not be sent, or undefined when it may: it breaks the schema that the
 * server's own structuredContent met.
 */
export async function breaksOutputSchema(
  schema: unknown,
  original: unknown,
  redacted: unknown,
): Promise<string | undefined> {
  if (typeof schema !== 'object' || schema === null || redacted === undefined) return undefined;
  const validate = await validatorOf(schema);
  if (validate === null || validate(redacted) || !validate(original)) return undefined;
  return "redacting it would break the tool's outputSchema (a pattern, format, enum or length)";
}
