#!/usr/bin/env node
import { main } from '../commands/lamclean';
import { runCommand } from '../run-command';

runCommand(main);
