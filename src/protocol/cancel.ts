// The slice of AbortSignal the upstreams use to hear that a caller went away. An AbortSignal fits it;
// so does the edge's cheaper ClientGone, which spares every request an AbortController.

export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
