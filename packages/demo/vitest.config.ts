import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The 3-broker lessons: `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: ['test/**/*.cluster.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // relay-switch took 71 s alone and more than 240 s on a machine at load 15-23.
    testTimeout: 420_000,
    hookTimeout: 240_000,
    // Each file runs a whole backend (five processes): one at a time on two cores.
    fileParallelism: false,
  },
});
