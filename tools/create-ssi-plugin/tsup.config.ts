import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  // @ssi/core is bundled (code and types): `npx create-ssi-plugin` from a packed tarball must
  // run before any @ssi package is on a registry, so the scaffold has no @ssi dependency.
  noExternal: ['@ssi/core'],
  dts: { entry: 'src/index.ts', resolve: ['@ssi/core'] },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
