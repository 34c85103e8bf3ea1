// JSON text to values without changing a number on the way through. JSON.parse makes every number a double,
// so a 19-digit id or argument (12345678901234567890, a snowflake, a database key) would reach the server as
// 12345678901234567000, and 1e400 as null, after one pass through the gateway. Where the runtime allows it
// (Node 22 and later: JSON.parse hands a reviver each number's source text, and JSON.rawJSON makes a value
// JSON.stringify writes back as that text), a number a double cannot hold exactly is kept as raw JSON, so every
// stringify on the way out writes the digits that came in. Text that holds no such number (a cheap test of its
// characters) takes plain JSON.parse, so an ordinary message pays one regular-expression scan.
import { isSafeNumber } from 'lossless-json';

/** A number kept as its source text: JSON.stringify writes `rawJSON` as it is. Frozen, null prototype. */
export interface RawJsonNumber {
  readonly rawJSON: string;
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const native = JSON as unknown as {
  rawJSON?: (text: string) => RawJsonNumber;
  isRawJSON?: (value: unknown) => boolean;
};

/** Whether numbers beyond a double's precision pass through unchanged here (not on Node 20). */
export const KEEPS_EXACT_NUMBERS = typeof native.rawJSON === 'function' && typeof native.isRawJSON === 'function';

/**
 * A superset of the texts holding a number a double may not keep: 16 or more digits in a row (a dot allowed
 * between them), or a three-digit exponent (overflow, underflow). A match inside a string only costs the
 * slower parse; the reviver then decides number by number.
 */
const MAYBE_INEXACT = /\d(?:\.?\d){15}|[eE][+-]?\d{3}/;
/**
 * Its cheaper first look (about 150 ns for a small request where MAYBE_INEXACT takes 260, on Node 22): a JSON
 * number has at most one dot, so 16 of its digits hold a run of 8.
 */
const LONG_RUN = /\d{8}|[eE][+-]?\d{3}/;

/**
 * Whether any number was kept as written in this process. Until one is, nothing can be one, and isRawNumber
 * (asked of every object isObject sees) answers without its `in` test, a megamorphic lookup on the hot path.
 */
let keptAny = false;

const keepExact: Reviver = (_key, value, context) => {
  if (typeof value !== 'number' || context?.source === undefined || isSafeNumber(context.source)) return value;
  keptAny = true;
  return native.rawJSON!(context.source);
};

/** JSON.parse, but a number a double cannot hold exactly stays as written (where the runtime allows it). */
export function parseJson(text: string): unknown {
  if (!KEEPS_EXACT_NUMBERS || !LONG_RUN.test(text) || !MAYBE_INEXACT.test(text)) return JSON.parse(text);
  return JSON.parse(text, keepExact as Parameters<typeof JSON.parse>[1]);
}

/** A deep copy of a JSON value that keeps raw numbers raw (structuredClone would turn them into plain objects). */
export function copyJson<T>(value: T): T {
  return parseJson(JSON.stringify(value)) as T;
}

export function isRawNumber(value: unknown): value is RawJsonNumber {
  // isObject asks this of every object it sees: before any number was kept (keptAny), nothing is tested; then
  // the `in` test spares nearly every object the native call, and an object of the message's own with a
  // rawJSON key still gets the exact answer.
  return keptAny && typeof value === 'object' && value !== null && 'rawJSON' in value && native.isRawJSON!(value);
}

/** An integer, whether a double holds it or it was kept raw (an id or progressToken may be either). */
export function isJsonInteger(value: unknown): boolean {
  return (
    (typeof value === 'number' && Number.isInteger(value)) || (isRawNumber(value) && /^-?\d+$/.test(value.rawJSON))
  );
}

/**
 * A value as text for a label (a span attribute, a lookup key): a number kept raw as its digits. String()
 * throws on a raw number (its null prototype has no toString), and a template literal does too.
 */
export function textOf(value: unknown): string {
  return isRawNumber(value) ? value.rawJSON : String(value);
}

/**
 * A number's value as a double, whether plain or kept as written (undefined for anything else): for what the
 * gateway itself acts on (a ttlMs), never for what it passes on.
 */
export function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' ? value : isRawNumber(value) ? Number(value.rawJSON) : undefined;
}
