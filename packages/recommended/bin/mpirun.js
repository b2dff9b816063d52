#!/usr/bin/env node
import { runCliCommand } from './run-cli-command.js';

await runCliCommand('mpirun');
