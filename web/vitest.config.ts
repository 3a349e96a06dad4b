import { defineConfig } from 'vitest/config';

// Pure logic only (series, scenario matching): no DOM, no stack.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    fileParallelism: false,
  },
});
