import { defineConfig } from 'vitest/config';

// The 3-broker tests (*.cluster.test.ts): each starts a KRaft cluster of its own (three
// JVMs, a minute on two cores), so they run after every package's suite, in
// scripts/test-all.mjs' "3-broker lessons" step, not in `vitest run`.
export default defineConfig({
  test: {
    include: ['test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
