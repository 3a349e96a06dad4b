#!/usr/bin/env -S npx tsx
import http from 'node:http';
import { parseArgs } from 'node:util';
import { describeFaultMode, parseFaultMode } from './modes.ts';
import { FaultProxy } from './proxy.ts';

const usage = `usage: fault-proxy --target HOST:PORT [--listen HOST:PORT] [--mode MODE] [--control HOST:PORT]

A TCP fault proxy: clients connect to --listen, links go on to --target.
  --target    the real server (PostgreSQL, a Kafka broker, …)
  --listen    where to listen (default 127.0.0.1:0, a free port)
  --mode      pass | delay:MS | drop-responses | black-hole | reset (default pass)
  --control   an HTTP control port (default 127.0.0.1:0):
                PUT  /mode   body = a mode, e.g. "black-hole"
                GET  /stats  counters as JSON
  --help      this text
Prints one JSON line {"listen": …, "control": …} once both are bound.`;

function fail(message: string): never {
  process.stderr.write(`fault-proxy: ${message}\n${usage.split('\n')[0]}\n`);
  process.exit(2);
}

function address(text: string, what: string): { host: string; port: number } {
  const i = text.lastIndexOf(':');
  const port = Number(text.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 0 || port > 65_535)
    fail(`${what} must be HOST:PORT (got "${text}")`);
  return { host: text.slice(0, i), port };
}

let args;
try {
  args = parseArgs({
    options: {
      target: { type: 'string' },
      listen: { type: 'string', default: '127.0.0.1:0' },
      mode: { type: 'string', default: 'pass' },
      control: { type: 'string', default: '127.0.0.1:0' },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (error) {
  fail((error as Error).message);
}
if (args.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (!args.target) fail('--target is required');
let mode;
try {
  mode = parseFaultMode(args.mode);
} catch (error) {
  fail((error as Error).message);
}
const listen = address(args.listen, '--listen');
const proxy = await FaultProxy.start({
  target: address(args.target, '--target'),
  ...listen,
  mode,
});
const controlAt = address(args.control, '--control');
const control = http.createServer((req, res) => {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && req.url === '/stats') return reply(200, proxy.stats());
  if (req.method === 'PUT' && req.url === '/mode') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk.slice(0, 100)));
    req.on('end', () => {
      try {
        proxy.setMode(parseFaultMode(body.trim()));
        reply(200, { mode: describeFaultMode(proxy.mode) });
      } catch (error) {
        reply(400, { error: (error as Error).message });
      }
    });
    return;
  }
  reply(404, { error: 'GET /stats or PUT /mode' });
});
await new Promise<void>((resolve) => control.listen(controlAt.port, controlAt.host, resolve));
const { port } = control.address() as { port: number };
process.stdout.write(
  `${JSON.stringify({ listen: proxy.address, control: `${controlAt.host}:${port}` })}\n`,
);
const stop = () => {
  control.close();
  void proxy.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
