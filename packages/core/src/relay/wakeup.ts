import pg from 'pg';
import type { Logger } from 'pino';
import { DATABASE_TIMEOUT_DEFAULTS } from '../db/pg-config.ts';
import { backoffMs } from './backoff.ts';

/**
 * LISTENs for the outbox trigger's notifications on a dedicated connection and calls
 * `onWake`. Notifications are best effort (lost while disconnected), so the relay
 * keeps a fallback poll; this class only makes the common case fast. The connection
 * is re-opened with backoff when it drops.
 */
export class WakeUpListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clientConfig: pg.ClientConfig,
    private readonly onWake: () => void,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // A LISTEN connection is silent by design: only TCP keepalive notices its link is
    // gone (pgConfig sets it; a bare config gets it here).
    const client = new pg.Client({
      keepAlive: true,
      keepAliveInitialDelayMillis: DATABASE_TIMEOUT_DEFAULTS.keepAliveMs,
      ...this.clientConfig,
    });
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'wake-up listener connection failed; reconnecting');
      this.scheduleReconnect();
    });
    client.on('notification', () => this.onWake());
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      const channel = `outbox_pending.${rows[0]?.schema ?? 'public'}`;
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      this.client = client;
      this.failures = 0;
      // Anything inserted while we were away: let the relay look now.
      this.onWake();
    } catch (error) {
      this.log.warn({ err: error }, 'wake-up listener could not connect; retrying');
      void client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const old = this.client;
    this.client = undefined;
    void old?.end().catch(() => undefined);
    this.failures += 1;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        void this.connect();
      },
      backoffMs(this.failures, 200, 10_000),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
