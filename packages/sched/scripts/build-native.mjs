#!/usr/bin/env node
// Compiles the native addon (see @ssi/core's scripts/build-native.mjs). Used by both the `install`
// lifecycle script and `build`. The addon is optional: without it `schedAvailable()` says why and
// the MPI layer sleeps where it would have polled with yields, so a failure only warns.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNativeAddon } from '@ssi/core/build-native';

const built = buildNativeAddon({
  pkgDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@ssi/sched',
  addon: 'ssi_sched',
  argv: process.argv.slice(2),
});
if (!built) console.error('@ssi/sched: continuing without it: sched_yield is not available');
