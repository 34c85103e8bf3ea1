// A guardrail's webhook detector (docs/guardrails.md, "A webhook of your own"): a company's own DLP or classifier,
// sent the content and its context as JSON, answering allow, redact (spans in Unicode code points) or block.
// It lives here, not in policy/, because it is transport; what it answers becomes an ordinary detector's
// findings, judged by policy/guardrails/scan.ts like any other. Bounded by its timeout; an outage, a timeout or a
// malformed answer follows its failOpen. Loaded only when a rule that applies asks a webhook.
import type {
  CompiledRule,
  ContentVerdict,
  Detector,
  GuardrailStage,
  RuleHit,
  ScanRule,
  Span,
  WebhookSpec,
} from '../../policy/guardrails/index.js';
import { judgeContent, stringsOf } from './content-scan.js';

/** What the webhook is told besides the content: never a token, a header or anything else of the gateway's. */
export interface WebhookContext {
  readonly stage: GuardrailStage;
  readonly method: string;
  readonly endpoint: string;
  /** The caller's principal id. */
  readonly principal: string;
  readonly server: string | undefined;
  readonly kind: 'tools' | 'prompts' | 'resources';
  /** The tool's or prompt's /mcp name, or the resource's URI. */
  readonly name: string | undefined;
}

export type WebhookOutcome = 'allow' | 'redact' | 'block' | 'timeout' | 'unreachable' | 'malformed';
export type CountWebhook = (rule: string, webhook: string, outcome: WebhookOutcome) => void;

type Answer =
  | { kind: 'allow' }
  | { kind: 'block' }
  | { kind: 'redact'; spans: Map<string, Span[]> }
  | { kind: 'failed'; outcome: 'timeout' | 'unreachable' | 'malformed'; why: string };

/** At most this many spans in one answer: more is a malformed answer, not a reason to loop for long. */
const MAX_SPANS = 100_000;
/** An answer longer than this is malformed: the gateway never holds more of it in memory. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * judgeContent (policy/guardrails/scan.ts) for rules some of which ask webhooks: rules run in config order, each
 * webhook rule asked about the content as the rules before it left it (redacted already, where they redact).
 */
export async function judgeWithWebhooks(
  value: unknown,
  rules: readonly CompiledRule[],
  context: WebhookContext,
  count: CountWebhook,
): Promise<ContentVerdict> {
  let current = value;
  const hits: RuleHit[] = [];
  let pending: ScanRule[] = [];
  const run = (scanRules: ScanRule[]): ContentVerdict['blocked'] => {
    if (scanRules.length === 0) return undefined;
    const verdict = judgeContent(current, scanRules);
    hits.push(...verdict.hits);
    current = verdict.value;
    return verdict.blocked;
  };
  for (const rule of rules) {
    if (rule.webhooks.length === 0) {
      pending.push(rule);
      continue;
    }
    const before = run(pending);
    pending = [];
    if (before) return { value, hits, blocked: before };
    const texts = stringsOf(current);
    const answers = await Promise.all(rule.webhooks.map((spec) => ask(spec, rule.name, current, texts, context)));
    const detectors: Detector[] = [...rule.detectors];
    for (const [i, answer] of answers.entries()) {
      const spec = rule.webhooks[i]!;
      count(rule.name, spec.name, answer.kind === 'failed' ? answer.outcome : answer.kind);
      const hit = hitOf(rule, spec, answer);
      if (hit !== undefined) hits.push(hit);
      if (hit?.action === 'block') return { value, hits, blocked: { hit, why: hit.webhookFailure } };
      if (answer.kind === 'redact') detectors.push(spanDetector(spec.name, answer.spans));
    }
    const blocked = run([{ name: rule.name, action: rule.action, detectors }]);
    if (blocked) return { value, hits, blocked };
  }
  const blocked = run(pending);
  return blocked ? { value, hits, blocked } : { value: current, hits };
}

/** What a webhook's answer is as a rule's finding, beyond the spans it names (which judgeContent handles). */
function hitOf(rule: CompiledRule, spec: WebhookSpec, answer: Answer): RuleHit | undefined {
  if (answer.kind === 'failed') {
    const failure = `its webhook ${spec.name} ${answer.why}`;
    return spec.failOpen
      ? { rule: rule.name, action: 'log', detectors: [spec.name], webhookFailure: `${failure}; failOpen passed it` }
      : { rule: rule.name, action: 'block', detectors: [spec.name], webhookFailure: failure };
  }
  if (answer.kind !== 'block') return undefined;
  // A block cannot be redacted: a redact or block rule refuses; a log rule (a trial run) only records it.
  return { rule: rule.name, action: rule.action === 'log' ? 'log' : 'block', detectors: [spec.name] };
}

/** A detector that finds, in each string, the spans the webhook named in it. */
function spanDetector(name: string, spans: Map<string, Span[]>): Detector {
  return { name, numeric: false, find: (text) => spans.get(text) ?? [] };
}

async function ask(
  spec: WebhookSpec,
  rule: string,
  content: unknown,
  texts: string[],
  context: WebhookContext,
): Promise<Answer> {
  const body = JSON.stringify({ version: 1, rule, ...context, content, texts });
  try {
    const response = await fetch(spec.url, {
      method: 'POST',
      headers: { ...spec.headers, 'content-type': 'application/json', accept: 'application/json' },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(spec.timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return failed('unreachable', `answered HTTP ${response.status}`);
    }
    const answer = await readCapped(response);
    if (answer === undefined) return failed('malformed', `answered with more than ${MAX_ANSWER_BYTES} bytes`);
    return parseAnswer(answer, texts);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      return failed('timeout', `gave no answer within ${spec.timeoutMs} ms`);
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return failed('unreachable', `could not be reached (${cause ?? (error as Error).message})`);
  }
}

/** The body as text, or undefined (the rest cancelled) once it passes MAX_ANSWER_BYTES. */
async function readCapped(response: Response): Promise<string | undefined> {
  if (Number(response.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream.
    if (size > MAX_ANSWER_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function failed(outcome: 'timeout' | 'unreachable' | 'malformed', why: string): Answer {
  return { kind: 'failed', outcome, why };
}

/** The answer's JSON, checked whole: anything off (an unknown action, a span out of its text) is malformed. */
export function parseAnswer(body: string, texts: readonly string[]): Answer {
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return failed('malformed', 'answered with something other than JSON');
  }
  const action = (answer as { action?: unknown } | null)?.action;
  if (action === 'allow' || action === 'block') return { kind: action };
  if (action !== 'redact') return failed('malformed', 'answered without an action of allow, redact or block');
  const spans = (answer as { spans?: unknown }).spans;
  if (!Array.isArray(spans) || spans.length > MAX_SPANS)
    return failed('malformed', 'answered redact without a list of spans');
  const byText = new Map<string, Span[]>();
  const offsets = new Map<number, number[]>();
  for (const span of spans as unknown[]) {
    const { text, start, end } = (span ?? {}) as { text?: unknown; start?: unknown; end?: unknown };
    if (!isIndex(text) || text >= texts.length || !isIndex(start) || !isIndex(end))
      return failed('malformed', 'answered a span without a text index, start and end in range');
    let units = offsets.get(text);
    if (units === undefined) offsets.set(text, (units = unitOffsets(texts[text]!)));
    if (start >= end || end >= units.length)
      return failed('malformed', 'answered a span whose start and end are not within its text');
    const string = texts[text]!;
    const list = byText.get(string) ?? [];
    list.push([units[start]!, units[end]!]);
    byText.set(string, list);
  }
  return byText.size === 0 ? { kind: 'allow' } : { kind: 'redact', spans: byText };
}

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** For each code point index of `text` (and its end), the UTF-16 offset: the webhook counts in code points. */
function unitOffsets(text: string): number[] {
  const offsets: number[] = [];
  let unit = 0;
  for (const char of text) {
    offsets.push(unit);
    unit += char.length;
  }
  offsets.push(unit);
  return offsets;
}
