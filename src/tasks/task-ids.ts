// The gateway's own task ids (the Tasks extension, io.modelcontextprotocol/tasks). A server's task id is
// handed to the caller wrapped: the owning server, the server's own id and the tool that created the task,
// signed with a key derived from mrtr.secret and bound to the principal it was issued to. So a task is
// found again on any replica with the same secret (nothing is held in a process), one principal cannot
// poll, update or cancel another's task, and policy can judge a task's methods by the tool that made it.
// The principal is not written into the id, only into its signature: an id says nothing of who holds it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
const MAC_CHARS = 43; // base64url of 32 bytes

export class TaskIdCodec {
  private readonly key: Buffer;

  /** `secret`: mrtr.secret (every replica the same); without one, ids last as long as this process. */
  constructor(secret: string | undefined) {
    this.key = createHmac('sha256', secret ? Buffer.from(secret, 'utf8') : randomBytes(32))
      .update('mcp-gateway task id v1')
      .digest();
  }

  issue(ref: TaskRef, principal: string): string {
    const body = Buffer.from(JSON.stringify([ref.server, ref.taskId, ref.tool])).toString('base64url');
    return `${PREFIX}${body}.${this.mac(principal, body)}`;
  }

  /** What the id names, or undefined when it was not issued by this gateway to this principal (or was altered). */
  open(id: unknown, principal: string): TaskRef | undefined {
    if (typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
    const dot = id.lastIndexOf('.');
    if (dot <= PREFIX.length) return undefined;
    const body = id.slice(PREFIX.length, dot);
    // Compared as text: decoding first would let the spare bits of the last character vary.
    const given = Buffer.from(id.slice(dot + 1));
    if (given.length !== MAC_CHARS || !timingSafeEqual(given, Buffer.from(this.mac(principal, body)))) return undefined;
    try {
      const parts = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
      if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((part) => typeof part === 'string'))
        return undefined;
      const [server, taskId, tool] = parts as [string, string, string];
      return { server, taskId, tool };
    } catch {
      return undefined;
    }
  }

  private mac(principal: string, body: string): string {
    return createHmac('sha256', this.key).update(principal).update('\0').update(body).digest('base64url');
  }
}
