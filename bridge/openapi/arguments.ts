// Arguments checked against the tool's inputSchema before any request is made: a call the REST API would
// only refuse (or, worse, misread) is refused here with -32602 and what is wrong. The same checker reads an
// answer against the tool's outputSchema (openapi-upstream.ts). Each tool's validator is compiled on its first
// call, so a document of hundreds of operations costs nothing until they are used.
// Formats are not checked: OpenAPI documents use many ajv does not know, and the API checks its own.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from './schema-convert.js';

export class ArgumentChecker {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  /** What is wrong with `args` for `tool`, or undefined when they fit its schema; `what` names them. */
  problem(tool: string, schema: JsonSchema, args: unknown, what = 'arguments'): string | undefined {
    let validate = this.compiled.get(tool);
    if (!validate) {
      try {
        validate = this.ajv.compile(schema);
      } catch {
        // A schema ajv cannot compile (a document's mistake it did not validate): the API is left to judge.
        validate = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction;
      }
      this.compiled.set(tool, validate);
    }
    if (validate(args)) return undefined;
    const first = validate.errors?.[0];
    if (!first) return `the ${what} do not match the tool's schema`;
    const at = first.instancePath ? `${what}${first.instancePath.replace(/\//g, '.')}` : what;
    return `${at} ${first.message ?? 'does not match the schema'}`;
  }

  /** A reloaded document may change any tool's schema. */
  clear(): void {
    this.compiled.clear();
  }
}
