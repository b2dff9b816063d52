import { bundleDist } from '@ssi/core/bundle-dist';
import { defineConfig } from 'tsup';

// The library plus the two executables a node needs: lamd (the daemon) and hboot (its launcher).
export default defineConfig({
  entry: { index: 'src/index.ts', 'bin/lamd': 'src/bin/lamd.ts', 'bin/hboot': 'src/bin/hboot.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: true,
  target: 'node20',
  // One CommonJS start-up bundle with a code cache behind the ES module files (issue 21).
  onSuccess: () => bundleDist(process.cwd()),
  splitting: true,
});
