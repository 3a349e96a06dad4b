import { createTestDb, describeDemoTopicsCreatedBy, startService } from '@outbox/testkit';
import { workerEnv } from './support/outbox.ts';

describeDemoTopicsCreatedBy('publisher-worker', async (prefix) => {
  const db = await createTestDb();
  const service = await startService(workerEnv(db, prefix, { REPLICA_ID: 'w1' }));
  return { stop: () => service.stop().finally(() => db.close()) };
});
