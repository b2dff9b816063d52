#!/usr/bin/env node
import { main } from '../commands/tping';
import { runCommand } from '../run-command';

runCommand(main);
