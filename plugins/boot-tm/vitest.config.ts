import { defineConfig } from 'vitest/config';

// Real lamds, sshds and batch-system daemons: one file at a time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
