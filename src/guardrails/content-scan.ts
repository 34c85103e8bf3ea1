// The scan of a message's strings (policy/guardrails/scan.ts), loaded with this step. policy/guardrails/'s face
// is loaded at start (the config's checks compile rule sets), so it hands the scan out through a loader rather
// than a re-export: a gateway without guardrails never scans, and loads no scan.
import { loadContentScan } from '../../policy/guardrails/index.js';

export const { judgeContent, redactedCopy, redactText, stringsOf } = await loadContentScan();
