// Splits a byte stream into newline-delimited lines with a per-line size cap. A line over the cap is
// dropped whole, never buffered in full; its first and last bytes are kept so the caller can tell whose
// answer it was (serialisers put the JSON-RPC id either first or last).

const NEWLINE = 0x0a;
const EDGE_BYTES = 256;

export interface LineFramerEvents {
  line(text: string): void;
  oversized(bytes: number, head: string, tail: string): void;
}

export class LineFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes of the current line seen so far while discarding it. */
  private discarding = -1;
  private discardHead = '';
  private discardTail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxLineBytes: number,
    private readonly events: LineFramerEvents,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk, start, end);
      if (nl === -1) return;
      this.finishLine();
      start = nl + 1;
    }
  }

  /** Flushes a final line that had no newline (the stream ended). */
  end(): void {
    if (this.buffered > 0 || this.discarding >= 0) this.finishLine();
  }

  private take(chunk: Buffer, start: number, end: number): void {
    const length = end - start;
    if (length === 0) return;
    if (this.discarding >= 0) {
      this.discarding += length;
      this.keepTail(chunk.subarray(start, end));
      return;
    }
    if (this.buffered + length > this.maxLineBytes) {
      const head = Buffer.concat([...this.chunks, chunk.subarray(start, Math.min(end, start + EDGE_BYTES))]);
      this.discardHead = head.subarray(0, EDGE_BYTES).toString('utf8');
      this.discarding = this.buffered + length;
      this.keepTail(chunk.subarray(start, end));
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    // A subarray of a pooled chunk stays valid: Node never reuses a Buffer handed to 'data'.
    this.chunks.push(chunk.subarray(start, end));
    this.buffered += length;
  }

  private keepTail(piece: Buffer): void {
    const joined = piece.length >= EDGE_BYTES ? piece : Buffer.concat([this.discardTail, piece]);
    this.discardTail = Buffer.from(joined.subarray(Math.max(0, joined.length - EDGE_BYTES)));
  }

  private finishLine(): void {
    if (this.discarding >= 0) {
      const bytes = this.discarding;
      const head = this.discardHead;
      let tail = this.discardTail.toString('utf8');
      if (tail.endsWith('\r')) tail = tail.slice(0, -1);
      this.discarding = -1;
      this.discardHead = '';
      this.discardTail = Buffer.alloc(0);
      this.events.oversized(bytes, head, tail);
      return;
    }
    if (this.buffered === 0) return;
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    let text = bytes.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim().length > 0) this.events.line(text);
  }
}
