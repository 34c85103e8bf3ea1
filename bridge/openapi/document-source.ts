// Reading an OpenAPI document, and the one rule its references obey: a `$ref` names a place in the document
// itself, or a file in the document's own folder (or below it). Every other reference — an http(s) URL, a
// file:// URL, an absolute path, a path that climbs out with `..` — refuses the whole document before the
// parser sees it, so loading a document never makes a request or reads a file its author did not ship
// beside it. A document read from a URL may only refer within itself.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { isLoopbackHost } from '../../protocol/loopback.js';

/** A document larger than this is refused: an API description, not a data dump. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
const URL_TIMEOUT_MS = 10_000;

export class DocumentError extends Error {}

/** The document as read, before validation: its text (to tell a changed one) and the parsed tree. */
export interface DocumentSource {
  readonly text: string;
  readonly tree: unknown;
  /** The file it came from, when it came from one (external references resolve against it). */
  readonly file?: string;
  /**
   * Every file read and checked (the document and those it refers to), by absolute path: the parser is
   * served these texts, never the disk, so a file changed after the check cannot slip a reference in.
   */
  readonly files?: ReadonlyMap<string, string>;
  readonly url?: string;
}

export function isDocumentUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

export async function readDocument(location: string, where: string): Promise<DocumentSource> {
  if (isDocumentUrl(location)) {
    const text = await fetchDocument(location, where);
    const tree = parseText(text, location, where);
    for (const ref of references(tree))
      if (!ref.startsWith('#'))
        throw new DocumentError(
          `${where}: the document at ${location} refers to ${JSON.stringify(ref)}: a document read from a URL may ` +
            'only refer within itself (#/...); the gateway fetches nothing else',
        );
    return { text, tree, url: location };
  }
  const file = path.resolve(location);
  const text = await readText(file, where);
  const tree = parseText(text, file, where);
  const files = await checkFileReferences(file, text, tree, where);
  return { text, tree, file, files };
}

/** Refuses an https URL's redirects and anything but https, or http to a loopback address. */
async function fetchDocument(location: string, where: string): Promise<string> {
  const url = new URL(location);
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))
    throw new DocumentError(`${where}: ${location} is plain http to another host; give an https:// URL`);
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, { method: 'GET', signal: AbortSignal.timeout(URL_TIMEOUT_MS) });
  } catch (error) {
    throw new DocumentError(`${where}: could not read ${location}: ${(error as Error).message}`);
  }
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new DocumentError(`${where}: ${location} answered HTTP ${response.statusCode}, not the document`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_DOCUMENT_BYTES) {
      response.body.destroy();
      throw new DocumentError(`${where}: ${location} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readText(file: string, where: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new DocumentError(`${where}: could not read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

function parseText(text: string, from: string, where: string): unknown {
  try {
    return parseYaml(text);
  } catch (error) {
    throw new DocumentError(`${where}: ${from} is neither JSON nor YAML: ${(error as Error).message}`);
  }
}

/** Walks the document and every file it refers to, refusing a reference that leaves the document's folder. */
async function checkFileReferences(
  root: string,
  rootText: string,
  tree: unknown,
  where: string,
): Promise<Map<string, string>> {
  const folder = path.dirname(root);
  const seen = new Map([[root, rootText]]);
  const pending: { file: string; tree: unknown }[] = [{ file: root, tree }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    for (const ref of references(next.tree)) {
      if (ref.startsWith('#')) continue;
      const target = referencedFile(ref, next.file, folder);
      if (target === undefined)
        throw new DocumentError(
          `${where}: ${path.relative(folder, next.file) || next.file} refers to ${JSON.stringify(ref)}: references ` +
            `must stay within the document (#/...) or the files of its folder ${folder}; the gateway fetches nothing`,
        );
      if (seen.has(target)) continue;
      const text = await readText(target, where);
      seen.set(target, text);
      pending.push({ file: target, tree: parseText(text, target, where) });
    }
  }
  return seen;
}

/** The file a relative reference names, or undefined when it is a URL or lies outside `folder`. */
function referencedFile(ref: string, from: string, folder: string): string | undefined {
  const filePart = ref.split('#', 1)[0]!;
  if (/^[a-z][a-z0-9+.-]*:/i.test(filePart) || filePart.startsWith('//') || path.isAbsolute(filePart)) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(filePart);
  } catch {
    return undefined;
  }
  const target = path.resolve(path.dirname(from), decoded);
  const inside = path.relative(folder, target);
  return inside === '' || inside.startsWith('..') || path.isAbsolute(inside) ? undefined : target;
}

/** Every `$ref` string in a parsed tree. */
function references(tree: unknown): string[] {
  const found: string[] = [];
  const stack: unknown[] = [tree];
  while (stack.length) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else stack.push(value);
    }
  }
  return found;
}
