import { defineConfig } from 'tsup';

// Every file in src/bin is one command; the shebang in each is kept by tsup.
export default defineConfig({
  entry: ['src/bin/*.ts'],
  outDir: 'dist/bin',
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
});
