import { bundleDist } from '@ssi/core/bundle-dist';
import { defineConfig } from 'tsup';

// The library, the testing subpath (launcher + test runtime) and the test programs that every
// rpi module's (conformance) and coll module's (collectives) tests run. One build with splitting, so all entries share one copy of the
// MPI layer's modules.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // Node resolve hooks, loaded by path on the loader thread (see src/drop-in-peers.ts).
    'drop-in-peer-hooks': 'src/drop-in-peer-hooks.ts',
    // A light entry for commands that load drop-ins without the MPI layer (lamboot, laminfo).
    'drop-in-peers': 'src/drop-in-peers.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/conformance': 'src/testing/conformance.ts',
    'testing/collectives': 'src/testing/collectives.ts',
    'testing/jobs': 'src/testing/jobs.ts',
    'testing/datatypes': 'src/testing/datatypes.ts',
    'testing/topology': 'src/testing/topology.ts',
  },
  format: ['esm'],
  dts: {
    entry: {
      index: 'src/index.ts',
      'drop-in-peers': 'src/drop-in-peers.ts',
      'testing/index': 'src/testing/index.ts',
    },
  },
  clean: true,
  sourcemap: true,
  target: 'node20',
  // One CommonJS start-up bundle with a code cache behind the ES module files (issue 21).
  onSuccess: () => bundleDist(process.cwd()),
  splitting: true,
});
