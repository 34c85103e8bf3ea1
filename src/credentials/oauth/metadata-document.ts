// Reading one OAuth metadata document (RFC 9728, RFC 8414, OpenID discovery) at a well-known URL, with the
// three outcomes discovery must tell apart: the document; no document there (the server answered, with a 4xx, a
// redirect or something that is not a JSON object); or no answer worth reading (unreachable, timed out, 5xx).
// Only "no document" lets discovery fall back to the 2025-03-26 revision's way: a server that is down or
// failing says nothing about what it publishes, and guessing its endpoints then would mislead the person.

export class DiscoveryError extends Error {}

export type MetadataDocument =
  | { kind: 'found'; json: Record<string, unknown> }
  | { kind: 'absent'; why: string }
  | { kind: 'unreachable'; why: string };

const TIMEOUT_MS = 10_000;

/** GETs `url` as a metadata document; redirects are never followed (metadata is served where it is asked for). */
export async function readMetadata(url: string, headers: Record<string, string> = {}): Promise<MetadataDocument> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', ...headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    return { kind: 'unreachable', why: (error as Error).message };
  }
  if (response.status >= 500) {
    await response.body?.cancel();
    return { kind: 'unreachable', why: `HTTP ${response.status}` };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { kind: 'absent', why: `HTTP ${response.status}` };
  }
  const json = (await response.json().catch(() => undefined)) as unknown;
  return json !== null && typeof json === 'object' && !Array.isArray(json)
    ? { kind: 'found', json: json as Record<string, unknown> }
    : { kind: 'absent', why: 'not a JSON object' };
}

/** The document's JSON, or undefined whatever kept it from being read. */
export async function getJson(url: string): Promise<Record<string, unknown> | undefined> {
  const read = await readMetadata(url);
  return read.kind === 'found' ? read.json : undefined;
}
