#!/usr/bin/env node
// Compiles the native addon (see @ssi/core's scripts/build-native.mjs). Used by both the `install`
// lifecycle script and `build`. The addon is optional: without it everything works except socket
// buffer sizes (which then fail with a clear error when asked for), so a failure only warns.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNativeAddon } from '@ssi/core/build-native';

const built = buildNativeAddon({
  pkgDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@ssi/sockopt',
  addon: 'ssi_sockopt',
  argv: process.argv.slice(2),
});
if (!built) console.error('@ssi/sockopt: continuing without it: socket buffer sizes cannot be set');
