import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One PostgreSQL and one broker shared with every other suite: files in turn.
    fileParallelism: false,
  },
});
