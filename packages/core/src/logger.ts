import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * A structured logger (pino, JSON lines on stdout). Level from the caller's config
 * (LOG_LEVEL). Writes are synchronous: pino's default stream writes asynchronously and
 * its flush(cb) calls back at once (sonic-boom with minLength 0) while the write is
 * still in flight, so a failure point's SIGKILL lost its last line about one time in
 * five. At a service's log volume a blocking write to a pipe costs nothing that shows.
 */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, base: { service: name } }, pino.destination({ dest: 1, sync: true }));
}

/** A logger that drops everything: the default for library classes. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * A real crash for the failure points: writes a last line, waits until pino has
 * flushed it (to a pipe pino writes asynchronously, and SIGKILL would lose the line),
 * then SIGKILLs this process. Never resolves.
 */
export async function crashNow(log: Logger, fields: object, message: string): Promise<never> {
  log.warn(fields, message);
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  process.kill(process.pid, 'SIGKILL');
  return new Promise<never>(() => undefined);
}
