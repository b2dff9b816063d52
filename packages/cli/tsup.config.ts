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
  // @ssi/testbed (a devDependency, private) stays an import: only tests that boot a universe
  // over test hosts load it, from their own package's devDependencies.
  {
    entry: { index: 'src/testing/index.ts' },
    outDir: 'dist/testing',
    external: ['@ssi/testbed'],
    format: ['esm'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
  },
]);
