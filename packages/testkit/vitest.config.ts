import { defineConfig } from 'vitest/config';

// The testkit's own tests: real child processes, no stack.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
  },
});
