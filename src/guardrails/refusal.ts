// How a guardrail's refusal reads to the caller (docs/guardrails.md): the JSON-RPC error that names the rule, the
// stage and the detectors, never the content; told alike for a call refused on its way up, an answer refused on
// its way back, and a task whose result is refused (task-status.ts).
import type { ContentVerdict, GuardrailStage } from '../../policy/guardrails/index.js';
import { ErrorCode, type JsonObject } from '../../protocol/jsonrpc.js';

/** What a blocking rule found: the hit and, where the detector says, why. */
export type Blocked = NonNullable<ContentVerdict['blocked']>;

/**
 * What a request carries up from the caller: a call's arguments, and its answers to a server's questions (the
 * inputResponses of an input_required retry, or of tasks/update); a completion's argument being typed (its name
 * and value) and the arguments it gave before (context). Each is judged by the `arguments` stage.
 */
export const SENT_UP = ['arguments', 'inputResponses'] as const;
export const COMPLETION_SENT_UP = ['argument', 'context'] as const;
export type SentUp = (typeof SENT_UP)[number] | (typeof COMPLETION_SENT_UP)[number];

/** The JSON-RPC error of a guardrail's refusal: naming the rule, the stage and the detectors, never the content. */
export function refusalError(
  stage: GuardrailStage,
  blocked: Blocked,
  field: SentUp = 'arguments',
): { code: number; message: string; data: JsonObject } {
  const { hit, why } = blocked;
  const sentUp = field === 'inputResponses' ? 'the input responses' : 'the arguments';
  const where = stage === 'arguments' ? sentUp : `the ${stage === 'results' ? 'result' : stage}`;
  const data = { guardrail: hit.rule, stage, detectors: [...hit.detectors] };
  if (hit.webhookFailure !== undefined)
    return {
      code: ErrorCode.InvalidParams,
      message:
        `Refused by guardrail ${hit.rule}: ${hit.webhookFailure}, so ${where} could not be judged; ask an operator ` +
        `(guardrails[].name ${hit.rule}: its webhook's failOpen is false)`,
      data,
    };
  return {
    code: ErrorCode.InvalidParams,
    message:
      `Refused by guardrail ${hit.rule}: ${where} held ${hit.detectors.join(', ')}` +
      `${why === undefined ? '' : ` (${why})`}; ask an operator if this is wrong (guardrails[].name ${hit.rule})`,
    data,
  };
}
