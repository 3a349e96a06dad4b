import { defineConfig } from 'vitest/config';

// One running system for every spec (startSystem in the global setup), one spec file at
// a time: the specs break the same system on purpose and reset it in between.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 150_000,
    hookTimeout: 180_000,
  },
});
