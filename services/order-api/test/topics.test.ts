import { describeDemoTopicsCreatedBy } from '@outbox/testkit';
import { createTestDb } from './support/db.ts';
import { startService } from './support/process.ts';

describeDemoTopicsCreatedBy('order-api', async (prefix) => {
  const db = await createTestDb();
  const service = await startService(db, prefix);
  return { stop: () => service.stop().finally(() => db.close()) };
});
