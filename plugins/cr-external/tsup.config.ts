import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/crlam.ts', 'src/crmpi.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
