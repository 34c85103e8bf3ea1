// An OpenAPI document made ready to serve: read (document-source.ts, which enforces where references may
// point), validated against its specification (Swagger 2.0, OpenAPI 3.0 or 3.1) by @readme/openapi-parser,
// and dereferenced into one tree. A document that does not validate is refused with the parser's own
// account of where, so the config error points into the document.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileErrors, dereference, type ParserOptions, validate } from '@readme/openapi-parser';
import type { Dialect } from './schema-convert.js';
import { DocumentError, type DocumentSource, readDocument } from './document-source.js';

export interface LoadedDocument {
  readonly dialect: Dialect;
  /** The dereferenced document: $refs replaced by what they name (shared objects; cycles possible). */
  readonly api: Record<string, unknown>;
  /** The text it was read from, to tell whether a reload changed it. */
  readonly text: string;
  readonly url?: string;
}

export async function loadDocument(location: string, where: string): Promise<LoadedDocument> {
  const source = await readDocument(location, where);
  const dialect = dialectOf(source.tree, where);
  const options = parserOptions(source);
  // The parser dereferences what it validates in place: each step gets its own copy.
  const subject = (): never => (source.file ?? structuredClone(source.tree)) as never;
  let result: Awaited<ReturnType<typeof validate>>;
  try {
    result = await validate(subject(), options);
  } catch (error) {
    throw new DocumentError(`${where}: ${location} could not be read as OpenAPI: ${(error as Error).message}`);
  }
  if (!result.valid) throw new DocumentError(`${where}: ${location} is not valid: ${compileErrors(result)}`);
  const api = (await dereference(subject(), { ...options, dereference: { circular: true } })) as unknown as Record<
    string,
    unknown
  >;
  return { dialect, api, text: source.text, ...(source.url && { url: source.url }) };
}

function parserOptions(source: DocumentSource): ParserOptions {
  // A URL's references were checked to stay within it: nothing external at all.
  if (!source.files) return { resolve: { external: false } };
  // A file's were checked to stay in its folder; the parser reads those checked texts and nothing else.
  const files = source.files;
  const checkedFiles = {
    order: 1,
    canRead: (file: { url: string }) => !/^https?:/i.test(file.url),
    read: (file: { url: string }) => {
      const at = file.url.startsWith('file:') ? fileURLToPath(file.url) : path.resolve(decodeURI(file.url));
      const text = files.get(at);
      if (text === undefined) throw new Error(`${at} is not among the files the document was checked with`);
      return text;
    },
  };
  return { resolve: { file: checkedFiles as unknown as boolean } };
}

function dialectOf(tree: unknown, where: string): Dialect {
  const root = (tree ?? {}) as Record<string, unknown>;
  if (root.swagger === '2.0') return 'swagger2';
  if (typeof root.openapi === 'string' && root.openapi.startsWith('3.0')) return 'openapi30';
  if (typeof root.openapi === 'string' && root.openapi.startsWith('3.1')) return 'openapi31';
  throw new DocumentError(
    `${where}: the document says neither swagger: "2.0" nor openapi: "3.0.x" or "3.1.x" at its top; ` +
      'the gateway reads Swagger 2.0 and OpenAPI 3.0 and 3.1',
  );
}
