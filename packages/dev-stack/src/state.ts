import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';

/** What the dev-stack remembers about the local PostgreSQL it started. */
export interface PostgresState {
  pid: number | null;
  port: number;
  databaseUrl: string;
}

/** What the dev-stack remembers about the local broker it started. */
export interface KafkaState {
  pid: number | null;
  port: number;
  controllerPort: number;
  brokers: string[];
}

/** What the dev-stack remembers about the Kafka Connect (Debezium) it started. */
export interface ConnectState {
  pid: number;
  restPort: number;
  schema: string;
  topic: string;
  connector: string;
  /** Replication slot and publication (same name), dropped on stop. */
  slot: string;
  offsetsFile: string;
  databaseUrl: string;
}

/** Contents of `<dataDir>/stack.json`. */
export interface StackState {
  postgres?: PostgresState;
  kafka?: KafkaState;
  connect?: ConnectState | undefined;
  updatedAt?: string;
}

/** Reads stack.json; a missing or unreadable file means nothing is known to run. */
export async function readState(file: string): Promise<StackState> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StackState;
  } catch {
    return {};
  }
}

/** Writes stack.json atomically (tmp + rename) so a concurrent reader never sees half a file. */
export async function writeState(file: string, state: StackState): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  // Unique per write: two updates may overlap even within one process.
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  const body = { ...state, updatedAt: new Date().toISOString() };
  await writeFile(tmp, `${JSON.stringify(body, null, 2)}\n`);
  await rename(tmp, file);
}

/** Read-modify-write of one part of the state file. */
export async function updateState(file: string, patch: Partial<StackState>): Promise<void> {
  await writeState(file, { ...(await readState(file)), ...patch });
}
