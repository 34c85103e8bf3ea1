// A REST answer as a tool result. A 2xx JSON answer is the result's structuredContent (wrapped as `{ result }`
// when the operation's answer is not an object, as its outputSchema says) and its text; other text is text; any
// other type is an embedded resource (base64). Anything else is a tool error (`isError`) that says what
// happened: the status and a bounded excerpt of the body, or which setting stopped the call.
import type { RestOutcome } from './rest-client.js';

/** How much of an error answer's body a tool error quotes. */
const EXCERPT_CHARS = 1024;

export interface ResultContext {
  readonly where: string;
  readonly url: string;
  readonly wrapsResult: boolean;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

type ToolResult = Record<string, unknown>;

const isJson = (type: string): boolean => /^application\/(.+\+)?json\b/i.test(type);
const isText = (type: string): boolean =>
  type === '' || /^text\//i.test(type) || /^application\/(.+\+)?(xml|yaml|x-www-form-urlencoded)\b/i.test(type);

export function toolResult(outcome: RestOutcome, context: ResultContext): ToolResult {
  switch (outcome.kind) {
    case 'too-large':
      return failure(
        `The REST API's answer to ${context.url} was larger than ${context.maxResponseBytes} bytes ` +
          `(${context.where}.maxResponseBytes); it was not read further`,
      );
    case 'timeout':
      return failure(
        `The REST API did not answer ${context.url} within ${context.timeoutMs} ms (${context.where}.timeoutMs)`,
      );
    case 'cancelled':
      return failure('The request was cancelled by the client');
    case 'failed':
      return failure(`The REST API could not be reached at ${context.url}: ${outcome.message}`);
    case 'answer':
      return answered(outcome, context);
  }
}

function answered(outcome: Extract<RestOutcome, { kind: 'answer' }>, context: ResultContext): ToolResult {
  const text = outcome.body.toString('utf8');
  if (outcome.status < 200 || outcome.status > 299) {
    const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}… (${text.length} characters)` : text;
    return failure(`HTTP ${outcome.status} from ${context.url}${excerpt ? `: ${excerpt}` : ''}`);
  }
  if (isJson(outcome.contentType) && text.trim() !== '') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return failure(`The REST API answered ${context.url} with content type ${outcome.contentType} that is not JSON`);
    }
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    const structured = context.wrapsResult || !isObject ? { result: value } : value;
    return { content: [{ type: 'text', text }], structuredContent: structured, isError: false };
  }
  if (isText(outcome.contentType.split(';', 1)[0]!.trim()) || outcome.body.length === 0)
    return { content: [{ type: 'text', text: text || `HTTP ${outcome.status}` }], isError: false };
  const mimeType = outcome.contentType.split(';', 1)[0]!.trim();
  return {
    content: [{ type: 'resource', resource: { uri: context.url, mimeType, blob: outcome.body.toString('base64') } }],
    isError: false,
  };
}

function failure(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
