#!/usr/bin/env node
// The ssi-shm-clean command (see README, "Clean-up"); the code is in src/clean-cli.ts.
import '../dist/clean-cli.js';
