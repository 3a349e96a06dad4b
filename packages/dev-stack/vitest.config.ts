import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // The stack test starts real servers; running files one by one keeps the machine calm.
    fileParallelism: false,
  },
});
