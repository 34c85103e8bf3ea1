// What guardrails are configured with: plain shapes src/config/config.ts validates into, kept here so policy/
// never imports the config loader (as policy/settings.ts does for policies).

/** Where a rule looks: tool arguments (and prompt arguments), tool results, prompt messages, resource contents. */
export type GuardrailStage = 'arguments' | 'results' | 'prompts' | 'resources';
export const GUARDRAIL_STAGES: readonly GuardrailStage[] = ['arguments', 'results', 'prompts', 'resources'];

export type GuardrailAction = 'redact' | 'block' | 'log';

/** A detector of the config's own: a name (the redaction marker's) and an RE2 expression. */
export interface CustomDetectorSetting {
  name: string;
  regex: string;
}

export type DetectorSetting = string | CustomDetectorSetting;

export interface GuardrailSetting {
  name: string;
  on: readonly GuardrailStage[];
  /** Whom it applies to; left out: everyone (as `ids: ["*"]`). */
  principals?: { ids?: readonly string[]; groups?: readonly string[] } | undefined;
  /** Which servers' traffic; left out: every server's. */
  servers?: readonly string[] | undefined;
  /** Globs over /mcp names (as policies write them), per kind; left out: every item of that kind. */
  tools?: readonly string[] | undefined;
  prompts?: readonly string[] | undefined;
  resources?: readonly string[] | undefined;
  /** Endpoint paths (`/mcp`, `/servers/<name>/mcp`, `/profiles/<name>/mcp`, `/search/mcp`); left out: all. */
  endpoints?: readonly string[] | undefined;
  detect: readonly DetectorSetting[];
  action: GuardrailAction;
}
