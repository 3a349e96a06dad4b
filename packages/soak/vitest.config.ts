import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // A soak runs minutes by design; a cluster start takes one or two on two cores.
    testTimeout: 900_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
