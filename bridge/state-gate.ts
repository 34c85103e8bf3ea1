// Lets callers wait for an upstream's state to change (to ready, or to a state that fails them), bounded
// by their own deadline and cancellation. Shared by the stdio and HTTP supervisors.
import type { CancelSignal } from '../protocol/cancel.js';

export class StateGate {
  private current = deferred();

  /** Wakes every waiter; call on each state change. */
  open(): void {
    const settled = this.current;
    this.current = deferred();
    settled.resolve();
  }

  /** Resolves at the next state change, after `ms`, or when the caller cancels — whichever comes first. */
  wait(ms: number, signal: CancelSignal | undefined): Promise<void> {
    const changed = this.current.promise;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const onAbort = (): void => done();
      signal?.addEventListener('abort', onAbort, { once: true });
      void changed.then(done);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
    });
  }
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
