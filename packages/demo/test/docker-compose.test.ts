import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { z } from 'zod';
import { parseConfig } from '@outbox/lab';
import { configSchema as orderApiConfig } from '../../../services/order-api/src/config.ts';
import { configSchema as workerConfig } from '../../../services/publisher-worker/src/config.ts';
import { configSchema as consumerConfig } from '../../../services/inventory-consumer/src/config.ts';
import { configSchema as dashboardConfig } from '../../../services/dashboard-api/src/config.ts';

/**
 * docker-compose.yml cannot be run here (no Docker engine), so it is checked against the
 * code instead: every service of the repo is in it, each with an environment its own
 * config schema accepts (no unknown variable, no missing one), published ports and
 * health checks on the port it listens on, and dependencies that start it after
 * PostgreSQL, Kafka and the migrations.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  restart?: string;
  deploy?: { replicas?: number };
}
/** What `docker compose` does to `${VAR}`, `${VAR:-default}` and `${VAR:?error}`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{(\w+)(?::([-?])([^}]*))?\}/g,
    (_, name: string, op?: string, arg?: string) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (op === '-') return arg ?? '';
      if (op === '?') throw new Error(`compose would refuse to start: ${name}: ${arg}`);
      return '';
    },
  );
}
const composeText = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
// The one variable the README tells the user to set.
const userEnv = { CONTROL_TOKEN: 'a-token-of-32-characters-0123456' };
const compose = parse(interpolate(composeText, userEnv), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;

const schemas: Record<string, z.ZodType> = {
  'order-api': orderApiConfig,
  'publisher-worker': workerConfig,
  'inventory-consumer': consumerConfig,
  'dashboard-api': dashboardConfig,
};

/** The variable names a config schema reads (through a transform, too). */
function keysOf(schema: z.ZodType): string[] {
  const def = schema as unknown as { shape?: object; in?: { shape?: object } };
  const shape = def.shape ?? def.in?.shape;
  if (!shape) throw new Error('config schema is not an object schema');
  return Object.keys(shape);
}

const asEnv = (env: Record<string, string | number> = {}) =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));

describe('docker-compose.yml', () => {
  it('has every service of the repo, PostgreSQL, Kafka (KRaft, the official image) and the seed step', () => {
    const inRepo = readdirSync(join(root, 'services')).filter((d) =>
      existsSync(join(root, 'services', d, 'src', 'main.ts')),
    );
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgres', 'kafka', 'seed', ...inRepo]),
    );
    expect(services.kafka?.image).toMatch(/^apache\/kafka:4\./);
    expect(services.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(services.postgres?.image).toMatch(/^postgres:\d+/);
  });

  for (const [name, schema] of Object.entries(schemas)) {
    describe(name, () => {
      const service = services[name]!;
      const env = asEnv(service.environment);

      it('runs the service’s own entry point from the image the Dockerfile builds', () => {
        expect(service.build).toBe('.');
        expect(existsSync(join(root, 'Dockerfile'))).toBe(true);
        const entry = service.command?.at(-1);
        expect(entry).toBe(`services/${name}/src/main.ts`);
        expect(existsSync(join(root, entry!))).toBe(true);
      });

      it('sets only variables its config reads, and its config accepts them', () => {
        const known = keysOf(schema);
        expect(Object.keys(env).filter((k) => !known.includes(k))).toEqual([]);
        const config = parseConfig(schema, env) as Record<string, unknown>;
        // Reachable from outside its container.
        expect(config.HOST).toBe('0.0.0.0');
      });

      it('reaches PostgreSQL and Kafka by their compose names, with the credentials they are given', () => {
        const db = new URL(env.DATABASE_URL!);
        const pg = services.postgres!.environment!;
        expect(db.hostname).toBe('postgres');
        expect(db.username).toBe(pg.POSTGRES_USER);
        expect(db.password).toBe(pg.POSTGRES_PASSWORD);
        expect(db.pathname).toBe(`/${pg.POSTGRES_DB}`);
        const advertised = String(services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS);
        for (const broker of env.KAFKA_BROKERS!.split(','))
          expect(advertised).toContain(`://${broker}`);
      });

      it('publishes and health-checks the port it listens on', () => {
        const port = env.PORT!;
        expect(service.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${port}/healthz`);
        if ((service.deploy?.replicas ?? 1) > 1) {
          // Replicas cannot share a host port, and must not share a REPLICA_ID.
          expect(service.ports).toBeUndefined();
          expect(env.REPLICA_ID).toBeUndefined();
        } else {
          expect(service.ports).toContain(`${port}:${port}`);
        }
      });

      it('starts after PostgreSQL and Kafka are healthy and the migrations ran; Docker restarts it', () => {
        expect(service.depends_on).toEqual({
          postgres: { condition: 'service_healthy' },
          kafka: { condition: 'service_healthy' },
          seed: { condition: 'service_completed_successfully' },
        });
        expect(service.restart).toBe('unless-stopped');
      });
    });
  }

  it('runs two sharded publisher-worker replicas, as the demo does', () => {
    const worker = services['publisher-worker']!;
    expect(worker.deploy?.replicas).toBe(2);
    expect(worker.environment?.SHARDED).toBe('true');
  });

  it('refuses to start the dashboard without a control token', () => {
    expect(() => interpolate(composeText, {})).toThrow(/CONTROL_TOKEN/);
  });

  it('seeds with the script the repo has, once', () => {
    const seed = services.seed!;
    expect(seed.restart).toBe('no');
    expect(existsSync(join(root, seed.command!.at(-1)!))).toBe(true);
    expect(seed.environment?.DATABASE_URL).toBe(services['order-api']!.environment!.DATABASE_URL);
  });
});
