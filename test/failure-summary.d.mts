// Types for failure-summary.mjs, a node:test reporter (plain JavaScript: the runner loads it before any loader).
export interface SummaryState {
  readonly entries: unknown[];
}
export declare function newState(): SummaryState;
export declare function note(state: SummaryState, event: { type: string; data?: Record<string, unknown> }): boolean;
export declare function render(state: SummaryState): string;
export declare function errorText(error: unknown): string;
export default function failureSummary(source: AsyncIterable<unknown>): AsyncGenerator<never>;
