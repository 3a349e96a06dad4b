import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readTopic, testKafka, waitFor } from '../../testkit/src/index.ts';

const coreDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = join(coreDir, '..', '..');

/** The README's quick start, exactly as a reader copies it. */
function quickStart(): string {
  const readme = readFileSync(join(coreDir, 'README.md'), 'utf8');
  const block = /## Quick start\s+```js\n([\s\S]*?)```/.exec(readme);
  if (!block?.[1]) throw new Error('README.md has no ```js block under "## Quick start"');
  return block[1];
}

/**
 * A team adopting core: packs it, installs the tarball into a plain Node 20 project
 * (no workspace, no TypeScript, no patched kafkajs), and runs the quick start against
 * the dev-stack with a database of its own.
 */
describe('@outbox/core from a tarball, in a project outside this workspace', () => {
  const kafka = testKafka('external-project-test');
  const project = mkdtempSync(join(tmpdir(), 'outbox-core-user-'));
  const database = `quickstart_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(inject('databaseUrl'));
  databaseUrl.pathname = `/${database}`;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    // The quick start names its topic and group; start them afresh on a reused broker.
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.connect();
    await kafkaAdmin.deleteTopics({ topics: ['accounts.events'] }).catch(() => undefined);
    await kafkaAdmin.deleteGroups(['mailer']).catch(() => undefined);
    await kafkaAdmin.disconnect();

    const packDir = join(project, 'pack');
    mkdirSync(packDir);
    execFileSync(
      process.execPath,
      ['scripts/pnpm.mjs', '--filter', '@outbox/core', 'pack', '--pack-destination', packDir],
      { cwd: repoRoot, stdio: 'pipe' },
    );
    const tarball = join(
      packDir,
      readdirSync(packDir).find((f) => f.endsWith('.tgz'))!,
    );
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'adopter', private: true, type: 'module' }),
    );
    execFileSync('npm', ['install', '--no-audit', '--no-fund', tarball, 'kafkajs@2.2.4', 'pg'], {
      cwd: project,
      stdio: 'pipe',
    });
    writeFileSync(join(project, 'quick-start.mjs'), quickStart());
  }, 240_000);

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    rmSync(project, { recursive: true, force: true });
  });

  it('ships built JavaScript, types, the migrations and the README, and no TypeScript source', () => {
    const installed = join(project, 'node_modules', '@outbox', 'core');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest.exports['.']).toEqual({
      types: './dist/index.d.ts',
      default: './dist/index.js',
    });
    const files = readdirSync(installed, { recursive: true }).map(String);
    expect(files).toContain(join('dist', 'index.js'));
    expect(files).toContain(join('dist', 'index.d.ts'));
    expect(files).toContain(join('sql', '000001_outbox.sql'));
    expect(files).toContain('README.md');
    expect(files.some((f) => f.startsWith('src'))).toBe(false);
  });

  it('runs the quick start: the event is relayed, consumed, and its effect happens once', async () => {
    const child = spawn(process.execPath, ['quick-start.mjs'], {
      cwd: project,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl.toString(),
        KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(() => /welcome mail for a-1 \(event \d+\)/.test(output), {
        timeoutMs: 60_000,
        what: `the quick start's welcome mail; output so far:\n${output}`,
      });

      // Deliver the same event again, as a relay retry would: the inbox must skip it.
      const [original] = await readTopic(kafka, 'accounts.events', 1);
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: 'accounts.events',
        messages: [{ key: original!.key, value: original!.value, headers: original!.headers }],
      });
      await producer.disconnect();
      const db = new pg.Client({ connectionString: databaseUrl.toString() });
      await db.connect();
      const kafkaAdmin = kafka.admin();
      await kafkaAdmin.connect();
      try {
        await waitFor(
          async () => {
            const offsets = await kafka
              .admin()
              .fetchOffsets({ groupId: 'mailer', topics: ['accounts.events'] })
              .catch(() => []);
            return offsets[0]?.partitions.some(
              (p) =>
                p.partition === original!.partition &&
                Number(p.offset) >= Number(original!.offset) + 2,
            );
          },
          { timeoutMs: 60_000, what: 'the consumer to commit past the duplicate' },
        );
        const mails = await db.query('SELECT account_id FROM welcome_mails');
        expect(mails.rows).toEqual([{ account_id: 'a-1' }]);
        const sent = await db.query(
          'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NOT NULL',
        );
        expect(sent.rows).toEqual([{ n: 1 }]);
        const markers = await db.query(
          "SELECT count(*)::int AS n FROM inbox WHERE consumer = 'mailer'",
        );
        expect(markers.rows).toEqual([{ n: 1 }]);
      } finally {
        await kafkaAdmin.disconnect();
        await db.end();
      }
      expect(output.match(/welcome mail for/g)).toHaveLength(1);
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  });
});
