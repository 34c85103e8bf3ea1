// The least any Node.js HTTP → stdio MCP proxy does, as a yardstick for the gateway's own cost (not a
// product): node:http, one JSON.parse of the request to learn its id, the id swapped for one of its own
// so answers from a shared child find their caller, one JSON.parse of the child's line to find that id,
// one JSON.stringify of the answer. No validation, no policy, no cache, no metrics, no logs, no
// supervision. `instances` children, each request to the one with the fewest in flight.
//   node bench/bare-proxy.mjs <instances> <command> [args…]   prints `listening <port>` on 127.0.0.1
// Used by bench/bare.ts to say what part of the gateway's CPU per call any Node.js proxy pays on this
// machine (the pool and hop targets of issue 21).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';

const [count, command, ...args] = process.argv.slice(2);
const children = [];
for (let i = 0; i < Number(count); i++) {
  // Detached, as the gateway starts its children: each its own session, so the scheduler treats them alike.
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  const entry = { child, inFlight: 0 };
  createInterface({ input: child.stdout }).on('line', (line) => {
    let answer;
    try {
      answer = JSON.parse(line);
    } catch {
      return;
    }
    const caller = pending.get(answer.id);
    if (caller === undefined) return;
    pending.delete(answer.id);
    entry.inFlight--;
    answer.id = caller.id;
    const body = JSON.stringify(answer);
    caller.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    caller.res.end(body);
  });
  children.push(entry);
}

const pending = new Map();
let nextId = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    let target = children[0];
    for (const entry of children) if (entry.inFlight < target.inFlight) target = entry;
    const id = ++nextId;
    pending.set(id, { id: message.id, res });
    target.inFlight++;
    message.id = id;
    target.child.stdin.write(`${JSON.stringify(message)}\n`);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
const stop = () => {
  for (const { child } of children) child.kill();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
