import { defineConfig } from 'vitest/config';

// `npx vitest run` at the root runs every package's tests with that package's own config.
// Projects run one after another: multi-process tests must not compete for the two cores.
export default defineConfig({
  test: {
    projects: ['packages/*', 'plugins/*', 'tools/*', 'examples'],
    fileParallelism: false,
  },
});
