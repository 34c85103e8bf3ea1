// A tool's name from its operation: the operationId with every character a host refuses replaced by `_`, or,
// when the operation has none, its method and path (`get_pets_petId`); cut to the length left once the
// server's prefix is added. Two operations that end up with one name refuse the server: which of them a
// caller would reach must never depend on the order of the document.
import type { Operation } from './operations.js';

/** A tool name as hosts accept it (and /mcp checks): `[A-Za-z0-9_-]`, at most 64 with the prefix. */
export const MAX_TOOL_NAME = 64;

export function toolNameOf(operation: Operation, budget: number): string {
  const source = operation.operationId ?? `${operation.method.toLowerCase()}_${operation.path}`;
  const clean = source
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (clean || operation.method.toLowerCase()).slice(0, Math.max(1, budget));
}

export const describeOperation = (operation: Operation): string =>
  `${operation.method} ${operation.path}${operation.operationId ? ` (operationId ${operation.operationId})` : ''}`;

/** Names every operation, refusing the first pair (in sorted order) that shares one. */
export function nameOperations(
  operations: readonly Operation[],
  budget: number,
  where: string,
): Map<string, Operation> {
  const named = new Map<string, Operation>();
  const sorted = [...operations].sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
  for (const operation of sorted) {
    const name = toolNameOf(operation, budget);
    const earlier = named.get(name);
    if (earlier)
      throw new Error(
        `${where}: ${describeOperation(earlier)} and ${describeOperation(operation)} would both be the tool ` +
          `"${name}"; give one another operationId in the document, or leave one out with ${where}.operations.deny`,
      );
    named.set(name, operation);
  }
  return named;
}
