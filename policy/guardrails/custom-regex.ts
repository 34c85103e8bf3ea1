// A config's own detectors (`detect: [{ name, regex }]`), run by RE2 compiled to WebAssembly (re2-wasm): its
// time is linear in the input whatever the expression, so no pattern an operator writes, and no content a
// server sends, can make a scan explode. RE2 syntax is gitleaks' too, so its published patterns work as written.
// Loaded only when some rule names a custom detector: required on first use (re2-wasm is CommonJS and
// instantiates its module synchronously), so a config is checked whole, in one synchronous pass.
import { createRequire } from 'node:module';
import type { Detector, Span } from './detectors.js';

/** A shape of re2-wasm's RE2 class, all this module uses of it. */
interface Re2Like {
  lastIndex: number;
  exec(text: string): { index: number; 0: string } | null;
}
type Re2Constructor = new (pattern: string, flags: string) => Re2Like;

let loaded: Re2Constructor | undefined;

function re2(): Re2Constructor {
  loaded ??= (createRequire(import.meta.url)('re2-wasm') as { RE2: Re2Constructor }).RE2;
  return loaded;
}

/** Compiles a custom detector; throws with RE2's own words when the expression does not compile. */
export function customDetector(name: string, pattern: string): Detector {
  const RE2 = re2();
  const expression = new RE2(pattern, 'gu');
  return {
    name,
    numeric: true,
    find(text) {
      const spans: Span[] = [];
      // RE2 counts code points; strings count UTF-16 units: they differ only past a surrogate pair.
      const units = /[\uD800-\uDFFF]/.test(text) ? unitOffsets(text) : undefined;
      expression.lastIndex = 0;
      for (let m = expression.exec(text); m !== null; m = expression.exec(text)) {
        if (m[0] === '') {
          expression.lastIndex++;
          continue;
        }
        const start = units === undefined ? m.index : units[m.index]!;
        spans.push([start, start + m[0].length]);
      }
      return spans;
    },
  };
}

/** For each code point index, its UTF-16 offset. */
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
