#!/usr/bin/env node
import { main } from '../commands/lamboot';
import { runCommand } from '../run-command';

runCommand(main);
