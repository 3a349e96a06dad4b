import { createTestDb, describeDemoTopicsCreatedBy, startService } from '@outbox/testkit';
import { consumerEnv } from './support/events.ts';

describeDemoTopicsCreatedBy('inventory-consumer', async (prefix) => {
  const db = await createTestDb();
  const service = await startService(consumerEnv(db, prefix));
  return { stop: () => service.stop().finally(() => db.close()) };
});
