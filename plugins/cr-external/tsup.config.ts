import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/crlam.ts', 'src/crmpi.ts', 'src/restore-runner.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
