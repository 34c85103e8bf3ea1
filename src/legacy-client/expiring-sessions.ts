// Per-session state kept until the session would have expired anyway: sessions ended by DELETE
// (legacy-clients.ts) and subscriptions made without Redis (session-streams.ts). Expired entries are swept
// when the map has doubled since the last sweep, so an insertion costs O(1) amortised however many arrive
// at once (a replica catching up on 20,000 ended sessions sweeps five times, not 20,000), and the map
// never holds more than twice what was live at its peak.

/** Below this size nothing is swept: a sweep would cost more than the few entries it could free. */
const MIN_SWEEP_SIZE = 1024;

export class ExpiringSessions<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private sweepAtSize = MIN_SWEEP_SIZE;
  /** Sweeps so far: the work of keeping the map small stays linear in what was added (tests read it). */
  sweeps = 0;

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.entries.size;
  }

  /** The session's value while the session lives. */
  get(session: string): V | undefined {
    const entry = this.entries.get(session);
    if (!entry) return undefined;
    if (entry.expiresAt > this.now()) return entry.value;
    this.entries.delete(session);
    return undefined;
  }

  has(session: string): boolean {
    return this.get(session) !== undefined;
  }

  set(session: string, value: V, expiresAt: number): void {
    this.entries.set(session, { value, expiresAt });
    if (this.entries.size >= this.sweepAtSize) this.sweep();
  }

  delete(session: string): void {
    this.entries.delete(session);
  }

  private sweep(): void {
    this.sweeps++;
    const now = this.now();
    for (const [session, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(session);
    this.sweepAtSize = Math.max(MIN_SWEEP_SIZE, 2 * this.entries.size);
  }
}
