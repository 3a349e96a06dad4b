import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { adminQuery } from './db.ts';

/**
 * Versions the JSON records. Kafka does not report its version over the protocol, so
 * it is the one the dev-stack runs (its pom.xml), unless KAFKA_BROKERS points elsewhere.
 */
export async function machineFacts(databaseUrl: string) {
  const [pgRow] = await adminQuery<{ v: string }>(databaseUrl, 'SELECT version() AS v');
  let kafka = 'external (KAFKA_BROKERS): unknown';
  if (!process.env.KAFKA_BROKERS) {
    const pom = readFileSync(
      fileURLToPath(new URL('../../../dev-stack/kafka/pom.xml', import.meta.url)),
      'utf8',
    );
    kafka = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1] ?? 'unknown';
  }
  return {
    versions: { postgres: pgRow?.v ?? 'unknown', kafka, node: process.version, kafkajs: '2.2.4' },
  };
}
