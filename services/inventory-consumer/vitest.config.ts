import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The 3-broker tests: `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: ['test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One PostgreSQL and one broker for every suite: files run one after another.
    fileParallelism: false,
  },
});
