// The built-in detectors: each finds spans of text worth a rule's attention. They are a safety net, not a
// guarantee (docs/guardrails.md says what each catches and misses). Every expression here is written to run in
// time linear in its input: matches may start only where a token starts (a lookbehind), and every repeat that
// could backtrack is bounded, so no input (a megabyte of digits, of letters, of "eyJ") makes a scan explode.
import { ibanValid, luhnValid, plausibleCard } from './checksums.js';
import { SECRET_PATTERNS, URL_PASSWORD } from './secrets.js';

/** [start, end) in UTF-16 code units of the string scanned. */
export type Span = readonly [number, number];

export interface Detector {
  readonly name: string;
  /** Spans of `text` it finds, in order, not overlapping. */
  find(text: string): Span[];
  /**
   * Whether a JSON number can hold what it finds (a card number can be written as one): numbers in a result
   * are scanned only by such detectors.
   */
  readonly numeric: boolean;
}

/** A detector from one global expression, each match kept when `accept` says so. */
export function regexDetector(
  name: string,
  pattern: RegExp,
  numeric: boolean,
  accept?: (match: string) => boolean,
): Detector {
  return {
    name,
    numeric,
    find(text) {
      const spans: Span[] = [];
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        if (m[0] === '') {
          pattern.lastIndex++;
          continue;
        }
        if (accept === undefined || accept(m[0])) spans.push([m.index, m.index + m[0].length]);
      }
      return spans;
    },
  };
}

/**
 * Secrets: the token formats of one expression, and a URL's password (secrets.ts), which is looked for only in text
 * holding "://" (other text costs one search); spans of both that overlap (a token that is a URL's password) merge.
 */
function secretsDetector(): Detector {
  const tokens = regexDetector('secrets', SECRET_PATTERNS, false);
  const passwords = regexDetector('secrets', URL_PASSWORD, false);
  return {
    name: 'secrets',
    numeric: false,
    find(text) {
      const found = tokens.find(text);
      if (!text.includes('://')) return found;
      const more = passwords.find(text);
      if (more.length === 0) return found;
      return found.length === 0 ? more : merged(found, more);
    },
  };
}

/** Two ordered lists of spans as one, in order, overlapping spans joined. */
function merged(a: readonly Span[], b: readonly Span[]): Span[] {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0] || y[1] - x[1]);
  const out: Span[] = [];
  for (const span of all) {
    const last = out[out.length - 1];
    if (last === undefined || span[0] >= last[1]) out.push(span);
    else if (span[1] > last[1]) out[out.length - 1] = [last[0], span[1]];
  }
  return out;
}

/**
 * 13 to 19 digits, whole or in groups of four (Amex 4-6-5) split by one kind of separator, standing alone. A "+"
 * before the digits makes them a phone number in E.164 form (+43 664…, +49 15…), never a card.
 */
const CARD =
  /(?<![\w+-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1?\d{1,3})?|\d{4}([ -])\d{6}\2\d{5})(?![\w-])/g;

/** Two letters, two check digits, then 11 to 30 letters or digits, in groups of four with single spaces or none. */
const IBAN =
  /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![A-Za-z0-9])/g;

/** A local part of at most 64 characters, a domain of at most 8 labels and a letter-only top-level label. */
const EMAIL = new RegExp(
  [
    '(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}',
    String.raw`@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])`,
  ].join(''),
  'g',
);

/**
 * Phrases that try to override a model's instructions, as planted in fetched pages and documents. A short list on
 * purpose: it catches the common spellings, never a paraphrase (docs/guardrails.md).
 */
const INJECTION = new RegExp(
  [
    String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+` +
      String.raw`(?:(?:all|any|the|your|these|those|previous|prior|above|earlier|preceding|system)\s+){0,3}` +
      String.raw`(?:instructions|prompts?|directions|rules|guidelines)\b`,
    String.raw`\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|god)\s+mode\b`,
    String.raw`\b(?:reveal|print|show|repeat)\s+(?:me\s+)?(?:your|the)\s+` +
      String.raw`(?:system|hidden|initial)\s+(?:prompt|instructions)\b`,
    String.raw`\bdo\s+not\s+(?:tell|inform|alert)\s+the\s+user\b`,
    String.raw`\bnew\s+(?:system\s+)?instructions\s*:`,
    String.raw`<\/?\s*(?:system|im_start|im_end)\s*>`,
  ].join('|'),
  'gi',
);

function digitsOf(text: string): string {
  return text.replace(/[ -]/g, '');
}

export const BUILT_IN_DETECTORS = {
  creditCard: regexDetector('creditCard', CARD, true, (match) => {
    const digits = digitsOf(match);
    return digits.length >= 13 && digits.length <= 19 && plausibleCard(digits) && luhnValid(digits);
  }),
  iban: regexDetector('iban', IBAN, false, (match) => ibanValid(match.replace(/ /g, ''))),
  email: regexDetector('email', EMAIL, false),
  secrets: secretsDetector(),
  promptInjection: regexDetector('promptInjection', INJECTION, false),
} as const satisfies Record<string, Detector>;

export const BUILT_IN_NAMES: readonly string[] = Object.keys(BUILT_IN_DETECTORS);

/** A built-in detector by its config name (own keys only: `toString` is no detector). */
export function builtInDetector(name: string): Detector | undefined {
  return Object.hasOwn(BUILT_IN_DETECTORS, name)
    ? BUILT_IN_DETECTORS[name as keyof typeof BUILT_IN_DETECTORS]
    : undefined;
}
