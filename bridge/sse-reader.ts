// Incremental Server-Sent Events parser for the body of one HTTP answer: bytes in (any chunking, UTF-8
// split anywhere, LF / CRLF / CR line ends), one callback per complete event with its data and type.
// Comments (keep-alives), `id:` and `retry:` are skipped: MCP streams are not resumed.
import { StringDecoder } from 'node:string_decoder';

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
const BOM = 0xfeff;

export type SseEventHandler = (data: string, type: string) => void;

export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  /** Text of the line being read (no line end seen yet). */
  private pending = '';
  private data = '';
  private hasData = false;
  private type = '';
  /** The last chunk ended in CR: a LF that starts the next one belongs to the same line end. */
  private skipLf = false;
  private started = false;

  constructor(
    private readonly onEvent: SseEventHandler,
    /** Largest event (its data plus the unfinished line) kept, in UTF-16 code units. */
    private readonly maxEventChars: number,
  ) {}

  /** Feeds bytes; false when one event grew past the cap (the caller should stop reading). */
  push(chunk: Buffer): boolean {
    let text = this.decoder.write(chunk);
    if (text.length === 0) return true;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    let start = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    if (text.indexOf('\r', start) === -1) {
      // The common case (LF only): let indexOf do the scanning.
      for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
        this.line(this.take(text, start, nl));
        start = nl + 1;
      }
    } else {
      for (let i = start; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== LF && c !== CR) continue;
        this.line(this.take(text, start, i));
        if (c === CR) {
          if (i + 1 === text.length) this.skipLf = true;
          else if (text.charCodeAt(i + 1) === LF) i++;
        }
        start = i + 1;
      }
    }
    if (start < text.length) this.pending += start === 0 ? text : text.slice(start);
    return this.pending.length + this.data.length <= this.maxEventChars;
  }

  /**
   * The stream ended. The SSE standard drops an event that was not closed by a blank line; a JSON-RPC
   * response is too valuable to drop for a missing final newline, so a complete data line still counts.
   */
  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest) this.line(rest);
    this.line('');
  }

  private take(text: string, from: number, to: number): string {
    if (this.pending === '') return text.slice(from, to);
    const line = this.pending + text.slice(from, to);
    this.pending = '';
    return line;
  }

  private line(line: string): void {
    if (line.length === 0) {
      if (this.hasData) {
        const data = this.data;
        const type = this.type || 'message';
        this.data = '';
        this.hasData = false;
        this.type = '';
        this.onEvent(data, type);
      } else {
        this.type = '';
      }
      return;
    }
    if (line.charCodeAt(0) === COLON) return; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data' && field !== 'event') return; // id, retry, unknown fields
    const valueStart = colon === -1 ? line.length : line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
    const value = line.slice(valueStart);
    if (field === 'event') {
      this.type = value;
    } else if (this.hasData) {
      this.data += '\n' + value;
    } else {
      this.data = value;
      this.hasData = true;
    }
  }
}
