// False positives of the checksum detectors (creditCard: Luhn and issuer prefixes; iban: mod-97 and the country's
// length) on a corpus of ordinary results, generated from a fixed seed so every run reads the same corpus: order
// ids, timestamps, UUIDs, hex hashes, phone-like numbers, walked as tool results are (judgeContent). None allowed.
// A control plants real card numbers and IBANs in the same records, so the check cannot pass by finding nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILT_IN_DETECTORS } from '../../policy/guardrails/detectors.js';
import { judgeContent, type ScanRule } from '../../policy/guardrails/scan.js';
import { seededRandom } from '../seeded-random.js';

const { creditCard, iban } = BUILT_IN_DETECTORS;
const RULES: ScanRule[] = [{ name: 'checksums', action: 'redact', detectors: [creditCard, iban] }];
const PER_KIND = 2_000;

const random = seededRandom(48);
const int = (below: number) => Math.floor(random() * below);
const digits = (n: number) => Array.from({ length: n }, () => int(10)).join('');
const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
const upper = (n: number) => Array.from({ length: n }, () => 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'[int(34)]).join('');
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Seconds between 2001 and 2033, so a timestamp has the digits real ones have. */
const epoch = () => 1_000_000_000 + int(1_000_000_000);
const iso = (s: number) => new Date(s * 1000).toISOString();

const KINDS: Record<string, () => string> = {
  'order id': () =>
    pick([
      () => `ORD-${2000 + int(30)}${pad(1 + int(12))}${pad(1 + int(28))}-${digits(6)}`,
      () => `#${1000 + int(9_999_000)}`,
      () => `${digits(3)}-${digits(7)}-${digits(7)}`, // Amazon's 3-7-7
      () => `INV-${2000 + int(30)}-${digits(6)}`,
      () => `${1 + int(9)}${digits(8 + int(4))}`, // 9 to 12 digits
      () => `PO${pad(int(100))}${upper(12 + int(10))}`, // a purchase order reference: 2 letters, 2 digits, like an IBAN
    ])(),
  timestamp: () => {
    const s = epoch();
    return pick([
      () => String(s),
      () => `${s}${digits(3)}`, // ms
      () => `${s}${digits(6)}`, // µs
      () => `${s}${digits(9)}`, // ns
      () => iso(s),
      () => iso(s).replace('T', ' ').slice(0, 19),
      () => new Date(s * 1000).toUTCString(),
    ])();
  },
  uuid: () =>
    pick([
      () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`,
      () =>
        `${(epoch() * 1000)
          .toString(16)
          .padStart(12, '0')
          .replace(/^(.{8})/, '$1-')}-7${hex(3)}-a${hex(3)}-${hex(12)}`,
      () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`.toUpperCase(),
    ])(),
  'hex hash': () =>
    pick([
      () => hex(32), // MD5
      () => hex(40), // SHA-1, a git commit
      () => hex(64), // SHA-256
      () => hex(7 + int(6)), // a short commit
      () => hex(64).toUpperCase(),
      () => `sha256:${hex(64)}`,
    ])(),
  'phone-like number': () =>
    pick([
      () => `+1 (${200 + int(800)}) ${200 + int(800)}-${digits(4)}`,
      () => `+1${200 + int(800)}${digits(7)}`,
      () => `+44 ${pick(['20', '7911', '161'])} ${digits(4)} ${digits(4)}`,
      () => `+447${digits(9)}`,
      () => `+49 15${int(10)} ${digits(8)}`,
      () => `+4915${digits(10)}`, // 13 digits from a 4: a Visa length, were the "+" not read
      () => `+49 30 ${digits(8)}`,
      () => `+43 664 ${digits(7)}`,
      () => `+43664${digits(8)}`,
      () => `43664${digits(8)}`, // the same without its "+"
      () => `4915${digits(9)}`,
      () => `+33 6 ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`,
      () => `+81 3-${digits(4)}-${digits(4)}`,
      () => `+86 13${int(10)} ${digits(4)} ${digits(4)}`,
      () => `+91 ${9}${digits(4)} ${digits(5)}`,
      () => `+55 11 9${digits(4)}-${digits(4)}`,
      () => `0${digits(3)} ${digits(7)}`,
      () => `0049 15${int(10)} ${digits(8)}`,
      () => `${200 + int(800)}.${200 + int(800)}.${digits(4)}`,
    ])(),
};

/** A tool result as servers write them: the values in text content and in structuredContent. */
function result(kind: string, values: string[]): unknown {
  const records = values.map((value, i) => ({ id: i, kind, value, note: `${kind} ${value} seen` }));
  return { content: [{ type: 'text', text: JSON.stringify(records) }], structuredContent: { records } };
}

describe('the checksum detectors on a corpus of ordinary results', () => {
  for (const [kind, make] of Object.entries(KINDS)) {
    test(`${PER_KIND} ${kind}s: no card number, no IBAN`, () => {
      const values = Array.from({ length: PER_KIND }, make);
      const found = values.filter((value) => creditCard.find(value).length > 0 || iban.find(value).length > 0);
      assert.deepEqual(found, [], `${found.length} of ${PER_KIND} ${kind}s found`);
      assert.deepEqual(judgeContent(result(kind, values), RULES).hits, []);
    });
  }

  test('the control: real card numbers and IBANs planted in the same records are found', () => {
    const planted = ['4111 1111 1111 1111', '5555555555554444', '378282246310005', 'GB82 WEST 1234 5698 7654 32'];
    for (const value of planted) {
      const verdict = judgeContent(result('order id', [KINDS['order id']!(), value]), RULES);
      assert.equal(verdict.hits.length, 1, value);
      assert.doesNotMatch(JSON.stringify(verdict.value), new RegExp(value.slice(0, 9)), value);
    }
  });
});
