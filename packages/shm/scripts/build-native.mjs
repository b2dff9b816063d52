#!/usr/bin/env node
// Compiles the native addon (see @ssi/core's scripts/build-native.mjs). Used by both the `install`
// lifecycle script and `build`, so `pnpm install` and `turbo run build` each leave
// build/Release/ssi_shm.node in place. Without it @ssi/shm cannot work: a failure is fatal.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNativeAddon } from '@ssi/core/build-native';

const built = buildNativeAddon({
  pkgDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@ssi/shm',
  addon: 'ssi_shm',
  argv: process.argv.slice(2),
});
if (!built) process.exit(1);
