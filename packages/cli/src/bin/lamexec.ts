#!/usr/bin/env node
import { main } from '../commands/lamexec';
import { runCommand } from '../run-command';

runCommand(main);
