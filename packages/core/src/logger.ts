import { pino, type Logger } from 'pino';

export type { Logger };

/** A structured logger (pino, JSON lines). Level from the caller's config (LOG_LEVEL). */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, base: { service: name } });
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
