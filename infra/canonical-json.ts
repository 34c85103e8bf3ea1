// JSON with object keys sorted, so two encodings of the same value hash alike whatever order a client or
// server wrote its keys in. For digests only; messages travel as they came. A number kept as written
// (protocol/exact-json.ts) is an object only to JavaScript: it is written as its digits.
import { isRawNumber } from '../protocol/exact-json.js';

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object' && !isRawNumber(value)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
