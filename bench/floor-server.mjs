// The HTTP floor (npm run bench -- peers): a bare node:http server that answers a tools/call of `echo`
// itself — no upstream, no validation, one JSON.parse to find the id and the text. Anything that proxies MCP
// over HTTP costs at least this. Run by the bench as its own process (`node bench/floor-server.mjs`), on
// 127.0.0.1 and a free port, which it prints as `listening <port>`.
import http from 'node:http';

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
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: message.params?.arguments?.text ?? '' }], resultType: 'complete' },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Connections are keep-alive; close() waits for them, so do not wait forever.
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 1_000).unref());
