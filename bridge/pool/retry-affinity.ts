// Which child of a pool issued a modern server's input_required, so the client's retry goes back to it.
// A 2026 server keeps a call's state in its requestState and any child could serve the retry; one that keeps
// something in memory anyway would fail on a sibling, and the child that asked is the one sure to know.
// The requestState stays opaque: only a digest of it is kept, in memory, as a routing key, never logged.
// Tasks (io.modelcontextprotocol/tasks) likewise: the child that answered a task is the one that holds it,
// so tasks/get, tasks/update and tasks/cancel naming its id go back to that child.
// (A 2025 server's held call needs none of this: it stays in flight on its child until the retry answers
// it, src/layers/input-bridge.ts.)
import { createHash } from 'node:crypto';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { TASK_METHODS } from '../../protocol/mcp.js';

/** Retries remembered at most; the oldest is forgotten first (its retry then goes to the least busy child). */
const MAX_REMEMBERED = 10_000;

function digest(requestState: string): string {
  return createHash('sha256').update(requestState).digest('base64url');
}

export class RetryAffinity {
  private readonly holders = new Map<string, number>();

  /** Remembers `child` for the requestState of an input_required answer; anything else costs two property reads. */
  learn(response: JsonRpcResponse, child: number): void {
    if (!('result' in response)) return;
    const { resultType, requestState, taskId } = response.result;
    const key =
      resultType === 'input_required' && typeof requestState === 'string'
        ? digest(requestState)
        : resultType === 'task' && typeof taskId === 'string'
          ? `task:${digest(taskId)}`
          : undefined;
    if (key === undefined) return;
    if (this.holders.size >= MAX_REMEMBERED) this.holders.delete(this.holders.keys().next().value!);
    this.holders.set(key, child);
  }

  /** The child that issued this retry's requestState, or holds the task a task method names, if it is remembered. */
  childFor(message: JsonRpcRequest): number | undefined {
    if (this.holders.size === 0) return undefined;
    const params = message.params;
    if (TASK_METHODS.has(message.method))
      return typeof params?.taskId === 'string' ? this.holders.get(`task:${digest(params.taskId)}`) : undefined;
    const requestState = params?.requestState;
    return typeof requestState === 'string' ? this.holders.get(digest(requestState)) : undefined;
  }
}
