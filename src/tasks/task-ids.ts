// The gateway's own task ids (the Tasks extension, io.modelcontextprotocol/tasks). A server's task id is
// handed to the caller wrapped: the owning server, the server's own id and the tool that created the task,
// signed with a key derived from mrtr.secret and bound to the principal it was issued to. So a task is
// found again on any replica with the same secret (nothing is held in a process), one principal cannot
// poll, update or cancel another's task, and policy can judge a task's methods by the tool that made it.
// The principal is not written into the id, only into its signature: an id says nothing of who holds it.
import { createHmac, randomBytes } from 'node:crypto';
import { SignedTokenCodec } from '../../infra/signed-token.js';

/** What a gateway task id names. */
export interface TaskRef {
  /** The server that owns the task. */
  server: string;
  /** The server's own id for it. */
  taskId: string;
  /** The server's own name of the tool whose call created it. */
  tool: string;
}

const PREFIX = 'gwtask1.';

export class TaskIdCodec {
  private readonly tokens: SignedTokenCodec;

  /** `secret`: mrtr.secret (every replica the same); without one, ids last as long as this process. */
  constructor(secret: string | undefined) {
    const key = createHmac('sha256', secret ? Buffer.from(secret, 'utf8') : randomBytes(32))
      .update('mcp-gateway task id v1')
      .digest();
    this.tokens = new SignedTokenCodec(key, PREFIX);
  }

  issue(ref: TaskRef, principal: string): string {
    return this.tokens.issue(JSON.stringify([ref.server, ref.taskId, ref.tool]), principal);
  }

  /** What the id names, or undefined when it was not issued by this gateway to this principal (or was altered). */
  open(id: unknown, principal: string): TaskRef | undefined {
    const body = this.tokens.open(id, principal);
    if (body === undefined) return undefined;
    try {
      const parts = JSON.parse(body) as unknown;
      if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((part) => typeof part === 'string'))
        return undefined;
      const [server, taskId, tool] = parts as [string, string, string];
      return { server, taskId, tool };
    } catch {
      return undefined;
    }
  }
}
