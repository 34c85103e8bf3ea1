// Requests waiting for a slot, one lane (a FIFO) per caller, served round robin across lanes: a caller
// with a thousand waiting requests gets one turn, then every other waiting caller gets one. Every step is
// O(1) and allocates nothing but a lane when a caller starts waiting: lanes are a ring of linked lists, so
// a request whose client went away leaves from the middle at once. When the queue is full, a newcomer may
// take the place of the newest request of the longest lane (evictFor), so a flood cannot keep others out.

/** What the queue links; a waiting request extends it. */
export class QueueNode {
  /** The lane holding this node; undefined when it is not queued. */
  lane: Lane | undefined = undefined;
  prev: QueueNode | undefined = undefined;
  next: QueueNode | undefined = undefined;
}

export class Lane {
  head: QueueNode | undefined = undefined;
  tail: QueueNode | undefined = undefined;
  length = 0;
  /** Neighbours in the ring of lanes with someone waiting. */
  before: Lane = this;
  after: Lane = this;

  constructor(readonly key: string) {}
}

export class FairQueue<T extends QueueNode> {
  private readonly lanes = new Map<string, Lane>();
  /** The lane whose turn is next; undefined when nothing waits. */
  private turn: Lane | undefined;
  /** Nodes waiting, across lanes. */
  size = 0;

  /** Callers with at least one request waiting. */
  get callers(): number {
    return this.lanes.size;
  }

  /** Queues `node` at the end of `key`'s lane; a new lane takes its turn after every lane already waiting. */
  push(key: string, node: T): void {
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = new Lane(key);
      this.lanes.set(key, lane);
      this.join(lane);
    }
    node.lane = lane;
    node.prev = lane.tail;
    node.next = undefined;
    if (lane.tail) lane.tail.next = node;
    else lane.head = node;
    lane.tail = node;
    lane.length++;
    this.size++;
  }

  /**
   * For a full queue: takes out and returns the newest node of the longest lane when that lane is at
   * least two longer than `key`'s, so the newcomer can have its place; otherwise undefined (the newcomer
   * is the one to refuse). Scans the lanes: only ever on the refusal path.
   */
  evictFor(key: string): T | undefined {
    const mine = this.lanes.get(key)?.length ?? 0;
    let longest: Lane | undefined;
    for (const lane of this.lanes.values()) if (!longest || lane.length > longest.length) longest = lane;
    if (!longest || longest.length < mine + 2) return undefined;
    const node = longest.tail as T;
    this.unlink(longest, node);
    return node;
  }

  /** Takes the first node of the lane whose turn it is, and passes the turn on. */
  shift(): T | undefined {
    const lane = this.turn;
    if (lane === undefined) return undefined;
    const node = lane.head as T;
    this.unlink(lane, node);
    // A lane that emptied left the ring and moved the turn on already.
    if (lane.head !== undefined) this.turn = lane.after;
    return node;
  }

  /** Takes `node` out wherever it waits; false when it was not queued. */
  remove(node: T): boolean {
    const lane = node.lane;
    if (lane === undefined) return false;
    this.unlink(lane, node);
    return true;
  }

  /** Empties the queue, returning what waited (in no particular order). */
  clear(): T[] {
    const all: T[] = [];
    for (const lane of this.lanes.values()) {
      for (let node = lane.head; node; node = node.next) {
        node.lane = undefined;
        all.push(node as T);
      }
    }
    this.lanes.clear();
    this.turn = undefined;
    this.size = 0;
    return all;
  }

  private unlink(lane: Lane, node: QueueNode): void {
    if (node.prev) node.prev.next = node.next;
    else lane.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else lane.tail = node.prev;
    node.lane = node.prev = node.next = undefined;
    lane.length--;
    this.size--;
    if (lane.head === undefined) this.leave(lane);
  }

  /** Puts a lane at the back of the ring: just before the lane whose turn is next. */
  private join(lane: Lane): void {
    const turn = this.turn;
    if (turn === undefined) {
      this.turn = lane;
      return;
    }
    lane.before = turn.before;
    lane.after = turn;
    turn.before.after = lane;
    turn.before = lane;
  }

  private leave(lane: Lane): void {
    this.lanes.delete(lane.key);
    if (lane.after === lane) {
      this.turn = undefined;
      return;
    }
    lane.before.after = lane.after;
    lane.after.before = lane.before;
    if (this.turn === lane) this.turn = lane.after;
    lane.before = lane.after = lane;
  }
}
