#!/usr/bin/env node
import { main } from '../commands/recon';
import { runCommand } from '../run-command';

runCommand(main);
