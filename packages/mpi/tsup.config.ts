import { defineConfig } from 'tsup';

// The library, the testing subpath (launcher + test runtime) and the conformance program that
// every rpi module's tests run. One build with splitting, so all entries share one copy of the
// MPI layer's modules.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/conformance': 'src/testing/conformance.ts',
  },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' } },
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
});
