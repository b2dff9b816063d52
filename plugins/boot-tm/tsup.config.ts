import { defineConfig } from 'tsup';

// The module, and the program the batch system starts on each node (it starts the lamd there).
export default defineConfig({
  entry: { index: 'src/index.ts', 'bin/tm-lamd': 'src/bin/tm-lamd.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
