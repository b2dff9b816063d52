#!/usr/bin/env node
import { main } from '../commands/wipe';
import { runCommand } from '../run-command';

runCommand(main);
