import { defineConfig } from 'vitest/config';

// Real Slurm daemons on fixed ports of this machine: one file at a time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
