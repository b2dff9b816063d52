import { bundleDist } from '@ssi/core/bundle-dist';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // One CommonJS start-up bundle with a code cache behind the ES module files (issue 21).
  onSuccess: () => bundleDist(process.cwd()),
});
