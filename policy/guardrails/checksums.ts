// The checksums that tell a payment card number or an IBAN from any other run of digits: without them every
// order number and timestamp of the right length would be redacted.

/** Luhn (ISO/IEC 7812-1) over a string of ASCII digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Issuer prefixes of the card networks in use (Visa, Mastercard, American Express, Discover, JCB, Diners,
 * UnionPay, Maestro) with their lengths: a Luhn-valid number outside them is taken for something else.
 */
export function plausibleCard(digits: string): boolean {
  const n = digits.length;
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  // Visa: no 13-digit numbers in circulation any more (Braintree's credit-card-type lists 16, 18 and 19), while
  // 13 digits from a 4 is an Austrian or German phone number written without its "+".
  if (digits[0] === '4') return n === 16 || n === 18 || n === 19;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return n === 16;
  if (two === 34 || two === 37) return n === 15;
  if (two === 36 || two === 38 || two === 39 || (four >= 3000 && four <= 3059)) return n >= 14 && n <= 19;
  if (four >= 3528 && four <= 3589) return n >= 16 && n <= 19;
  if (four === 6011 || two === 65 || (four >= 6440 && four <= 6499)) return n >= 16 && n <= 19;
  if (two === 62 || two === 50 || (two >= 56 && two <= 58) || two === 63 || two === 67) return n >= 16 && n <= 19;
  return false;
}

/** IBAN lengths by country (ISO 13616 registry, as of 2026): a code or a length outside it is no IBAN. */
// biome-ignore format: a table reads better in rows
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22,
  CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22,
  GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30,
  KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31,
  MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24,
  SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};

/** ISO 13616 mod-97 check over an IBAN without spaces (upper-case letters and digits). */
export function ibanValid(iban: string): boolean {
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < moved.length; i++) {
    const code = moved.charCodeAt(i);
    // Letters count as two digits (A = 10 … Z = 35); the remainder is folded as the digits come.
    if (code >= 65 && code <= 90) remainder = (remainder * 100 + (code - 55)) % 97;
    else if (code >= 48 && code <= 57) remainder = (remainder * 10 + (code - 48)) % 97;
    else return false;
  }
  return remainder === 1;
}
