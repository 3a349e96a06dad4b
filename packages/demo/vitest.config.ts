import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 240_000,
    // Each file runs a whole backend (five processes): one at a time on two cores.
    fileParallelism: false,
  },
});
