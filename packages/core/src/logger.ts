import { pino, type Logger } from 'pino';

export type { Logger };

/** A structured logger (pino, JSON lines). Level from the caller's config (LOG_LEVEL). */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, base: { service: name } });
}

/** A logger that drops everything: the default for library classes. */
export const silentLogger: Logger = pino({ level: 'silent' });
