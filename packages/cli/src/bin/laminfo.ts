#!/usr/bin/env node
import { main } from '../commands/laminfo';
import { runCommand } from '../run-command';

runCommand(main);
