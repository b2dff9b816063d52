import { defineConfig } from 'vitest/config';

// Only the harness is unit-tested here; benchmarks themselves never run in tests.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 20_000 },
});
