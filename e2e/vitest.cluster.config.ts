import { defineConfig } from 'vitest/config';

// The 3-broker specs (*.cluster.test.ts): a system of their own on a KRaft cluster of
// three brokers (global-setup-cluster.ts), never the one-broker system of the others.
export default defineConfig({
  test: {
    include: ['test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup-cluster.ts'],
    fileParallelism: false,
    testTimeout: 480_000,
    hookTimeout: 360_000,
  },
});
