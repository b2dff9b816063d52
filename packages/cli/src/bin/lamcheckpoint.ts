#!/usr/bin/env node
import { main } from '../commands/lamcheckpoint';
import { runCommand } from '../run-command';

runCommand(main);
