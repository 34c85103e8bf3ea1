// policy/guardrails/: content rules (docs/guardrails.md) as settings, compiled rule sets and the scan of a
// message's strings. The config's checks compile a rule set (synchronously, to report its problems), so the
// rule set and settings are loaded with the config; the scan that judges a message is loaded with the step
// that applies the rules (src/guardrails/), through loadContentScan.
export { nonCanonicalUri } from './canonical-uri.js';
export type { Detector, Span } from './detectors.js';
export { GuardrailError, GuardrailSet } from './rule-set.js';
export type { CompiledRule, ContentFacts, ItemKind, KnownNames, WebhookSpec } from './rule-set.js';
export type { ContentVerdict, RuleHit, ScanRule } from './scan.js';
export { GUARDRAIL_STAGES } from './settings.js';
export type { GuardrailStage } from './settings.js';

/** scan.ts: judging and redacting a message's strings, for the guardrail step once it is loaded. */
export const loadContentScan = () => import('./scan.js');
