import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // The tests share one PostgreSQL and one broker on a 2-core machine; files run
    // one after another so that a slow neighbour does not starve a timing-free test.
    fileParallelism: false,
  },
});
