// Judges one JSON value (a tool's arguments, a result, a prompt's messages, a resource's contents) by the rules
// that apply to it: every string is scanned (numbers too, by the detectors that can find a number), rules in the
// config's order. `block` stops at the first rule that finds anything; `redact` replaces each span found with
// `[redacted:<detector>]` in a copy (the value given is never changed: a cached answer is shared); `log` only
// reports. The walk is iterative, so no nesting depth can overflow the stack.
import { copyJson, isRawNumber } from '../../protocol/exact-json.js';
import type { Detector, Span } from './detectors.js';
import type { GuardrailAction } from './settings.js';

export interface ScanRule {
  readonly name: string;
  readonly action: GuardrailAction;
  readonly detectors: readonly Detector[];
}

/** What one rule found: the names of its detectors that matched (never the matched text). */
export interface RuleHit {
  readonly rule: string;
  readonly action: GuardrailAction;
  readonly detectors: readonly string[];
  /** A webhook that could not judge (src/guardrails/webhook.ts): what went wrong, never the content. */
  readonly webhookFailure?: string;
}

export interface ContentVerdict {
  /** The value to pass on: the one given when nothing was redacted, else a redacted copy. */
  readonly value: unknown;
  readonly hits: readonly RuleHit[];
  /** Set when the value must not pass: the blocking rule's hit, and why when a redaction could not be made. */
  readonly blocked?: { hit: RuleHit; why?: string };
}

/**
 * Keys whose values are the protocol's own (kinds, media types, base64 blobs, URIs that name things, metadata, ids):
 * redacting them would break the message, not protect it. docs/guardrails.md lists them.
 */
const SKIPPED_KEYS: ReadonlySet<string> = new Set([
  '_meta',
  'type',
  'mimeType',
  'blob',
  'uri',
  'annotations',
  // Ids the protocol matches on: a progress token, a task id, a cursor, a retry's state.
  'progressToken',
  'taskId',
  'nextCursor',
  'requestState',
]);

/** Integers shorter than this cannot be a card number (or anything a numeric detector finds). */
const SMALLEST_NUMERIC = 1e11;

export function marker(detector: string): string {
  return `[redacted:${detector}]`;
}

/** Judges `value` by `rules` in order. */
export function judgeContent(value: unknown, rules: readonly ScanRule[]): ContentVerdict {
  let current = value;
  let copied = false;
  const hits: RuleHit[] = [];
  for (const rule of rules) {
    const found = findIn(current, rule.detectors);
    if (found.detectors.size === 0) continue;
    const hit: RuleHit = { rule: rule.name, action: rule.action, detectors: [...found.detectors] };
    hits.push(hit);
    if (rule.action === 'block') return { value, hits, blocked: { hit } };
    if (rule.action !== 'redact') continue;
    if (found.inNumber) {
      // A number cannot hold a marker, and changing its value would lie: the answer is refused instead.
      return { value, hits, blocked: { hit, why: 'a number matched, and a number cannot be redacted' } };
    }
    if (!copied) {
      try {
        current = copyJson(current);
      } catch {
        // Nested deeper than JSON.stringify goes: it could not be written out either, so refuse, never pass it.
        return { value, hits, blocked: { hit, why: 'the content is nested too deeply to redact' } };
      }
      copied = true;
    }
    current = redactIn(current, rule.detectors);
  }
  return { value: current, hits };
}

/** A redacted copy of a value (the value itself is left as it is); undefined when it cannot be copied. */
export function redactedCopy(value: unknown, detectors: readonly Detector[]): unknown {
  try {
    return redactIn(copyJson(value), detectors);
  } catch {
    return undefined;
  }
}

/** Redacts every span the detectors find in one string: overlapping spans merge, the first detector names them. */
export function redactText(text: string, detectors: readonly Detector[]): string {
  const spans: { span: Span; name: string }[] = [];
  for (const detector of detectors) for (const span of detector.find(text)) spans.push({ span, name: detector.name });
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.span[0] - b.span[0] || b.span[1] - a.span[1]);
  let out = '';
  let at = 0;
  for (const { span, name } of spans) {
    if (span[0] < at) {
      // Inside (or overlapping) a span already replaced: extend it if this one reaches further.
      if (span[1] > at) at = span[1];
      continue;
    }
    out += text.slice(at, span[0]) + marker(name);
    at = span[1];
  }
  return out + text.slice(at);
}

/** The distinct strings of a value, in the walk's order (the keys it skips, skipped): what a webhook is sent. */
export function stringsOf(value: unknown): string[] {
  const seen = new Set<string>();
  eachLeaf(value, (leaf) => {
    if (typeof leaf === 'string') seen.add(leaf);
  });
  return [...seen];
}

interface Found {
  detectors: Set<string>;
  inNumber: boolean;
}

type Holder = Record<string, unknown> | unknown[];

/** Every string and integer of a JSON value, with where it sits, skipping SKIPPED_KEYS; depth-first, no recursion. */
function eachLeaf(value: unknown, visit: (leaf: unknown, holder: Holder | undefined, key: string | number) => void) {
  const stack: [unknown, Holder | undefined, string | number][] = [[value, undefined, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, holder, key] = next;
    if (typeof node === 'string' || typeof node === 'number' || isRawNumber(node)) visit(node, holder, key);
    else if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], node, i]);
    else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>;
      for (const k of Object.keys(record)) if (!SKIPPED_KEYS.has(k)) stack.push([record[k], record, k]);
    }
  }
}

function numberText(leaf: unknown): string | undefined {
  if (typeof leaf === 'number') return Number.isInteger(leaf) && leaf >= SMALLEST_NUMERIC ? String(leaf) : undefined;
  if (isRawNumber(leaf)) return /^\d+$/.test(leaf.rawJSON) ? leaf.rawJSON : undefined;
  return undefined;
}

function findIn(value: unknown, detectors: readonly Detector[]): Found {
  const found: Found = { detectors: new Set(), inNumber: false };
  eachLeaf(value, (leaf) => {
    if (typeof leaf === 'string') {
      for (const detector of detectors) if (detector.find(leaf).length > 0) found.detectors.add(detector.name);
      return;
    }
    const text = numberText(leaf);
    if (text === undefined) return;
    for (const detector of detectors) {
      if (detector.numeric && detector.find(text).length > 0) {
        found.detectors.add(detector.name);
        found.inNumber = true;
      }
    }
  });
  return found;
}

/** Redacts the strings of a value of our own (a copy): in place, or a new string when the value is one. */
function redactIn(value: unknown, detectors: readonly Detector[]): unknown {
  if (typeof value === 'string') return redactText(value, detectors);
  eachLeaf(value, (leaf, holder, key) => {
    if (typeof leaf !== 'string' || holder === undefined) return;
    const redacted = redactText(leaf, detectors);
    if (redacted !== leaf) (holder as Record<string | number, unknown>)[key] = redacted;
  });
  return value;
}
