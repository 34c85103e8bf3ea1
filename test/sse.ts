// The tests' one way to read Server-Sent Events: the gateway's own reader (bridge/sse-reader.ts, tested
// on its own in test/unit/sse-reader.test.ts), so a test reads a stream by the rules the gateway reads its
// upstreams by (any chunking, CRLF or CR line ends, comments and multi-line data) instead of a split on
// blank lines of its own.
import { SseReader } from '../bridge/sse-reader.js';

/** No cap on an event's size: a test wants to see whatever arrived. */
const NO_CAP = Number.MAX_SAFE_INTEGER;

/** The data of each event of an SSE body already read whole (its text), in order; events without data are skipped. */
export function sseData(text: string): string[] {
  const data: string[] = [];
  const reader = new SseReader((event) => data.push(event), NO_CAP);
  reader.push(Buffer.from(text, 'utf8'));
  reader.end();
  return data;
}

/** The JSON messages of an SSE body already read whole (its text), in order. */
export function sseTextMessages(text: string): any[] {
  return sseData(text).map((data) => JSON.parse(data));
}

/**
 * Hands each JSON message of an SSE body to `onMessage` as it arrives; resolves when the stream ends, and
 * rejects if it breaks (as when the test aborts it).
 */
export async function eachSseMessage(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  onMessage: (message: any) => void,
): Promise<void> {
  const reader = new SseReader((data) => onMessage(JSON.parse(data)), NO_CAP);
  for await (const chunk of body as AsyncIterable<Uint8Array>)
    reader.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  reader.end();
}
