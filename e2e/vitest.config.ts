import { configDefaults, defineConfig } from 'vitest/config';

// One running system for every spec (startSystem in the global setup), one spec file at
// a time: the specs break the same system on purpose and reset it in between.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The 3-broker specs run on a system of their own: vitest.cluster.config.ts.
    exclude: [...configDefaults.exclude, 'test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    fileParallelism: false,
    // npm test runs the specs beside the shared-stack lane (scripts/test-all.mjs): on two
    // cores relay-cdc took 151 s there against 92 s alone, past the 150 s this was.
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});
