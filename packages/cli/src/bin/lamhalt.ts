#!/usr/bin/env node
import { main } from '../commands/lamhalt';
import { runCommand } from '../run-command';

runCommand(main);
