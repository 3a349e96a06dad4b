import { defineConfig } from 'vitest/config';

// The proxy's own tests: a plain local TCP server, and the real PostgreSQL of the
// dev-stack through the proxy.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
