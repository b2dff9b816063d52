import { resolve } from 'node:path';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  // @ssi/core is bundled (code and types): `npx create-ssi-plugin` from a packed tarball must
  // run before any @ssi package is on a registry, so the scaffold has no @ssi dependency.
  noExternal: ['@ssi/core'],
  // From its source: @ssi/core's dist is a start-up bundle behind façades (docs/architecture.md),
  // which bundles no further.
  esbuildOptions(options) {
    options.alias = { '@ssi/core': resolve('../../packages/core/src/index.ts') };
  },
  dts: { entry: 'src/index.ts', resolve: ['@ssi/core'] },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
