import { defineConfig } from 'tsup';

export default defineConfig([
  // Every file in src/bin is one command; the shebang in each is kept by tsup.
  {
    entry: ['src/bin/*.ts'],
    outDir: 'dist/bin',
    format: ['esm'],
    dts: false,
    clean: true,
    sourcemap: true,
    target: 'node20',
    splitting: true,
  },
  // `@ssi/cli/testing`: helpers for tests that run the commands.
  {
    entry: { index: 'src/testing/index.ts' },
    outDir: 'dist/testing',
    format: ['esm'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
  },
]);
