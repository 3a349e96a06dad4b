import { createConnection, createServer } from 'node:net';

/** Asks the kernel for a free TCP port on 127.0.0.1 (listen on port 0, then release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** True when nothing listens on the port, so a previously used port can be taken again. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** True when something accepts TCP connections on host:port. */
export function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Reuses `preferred` when it is still free (stable URLs across restarts), else a new port. */
export async function pickPort(
  preferred: number | undefined,
  avoid: number[] = [],
): Promise<number> {
  if (preferred && !avoid.includes(preferred) && (await isPortFree(preferred))) return preferred;
  for (;;) {
    const port = await freePort();
    if (!avoid.includes(port)) return port;
  }
}
