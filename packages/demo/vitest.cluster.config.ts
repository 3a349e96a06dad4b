import { defineConfig } from 'vitest/config';

// The 3-broker lessons (*.cluster.test.ts): each starts a KRaft cluster of its own, which
// takes a minute or two on two cores, so `npm test` runs them in its "own stacks" lane
// (scripts/test-all.mjs) beside the one-broker suites rather than after them.
export default defineConfig({
  test: {
    include: ['test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 360_000,
    fileParallelism: false,
  },
});
