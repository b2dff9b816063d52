import { defineConfig } from 'vitest/config';

// Real sshd processes on shared loopback addresses: one file at a time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
