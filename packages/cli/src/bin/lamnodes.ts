#!/usr/bin/env node
import { main } from '../commands/lamnodes';
import { runCommand } from '../run-command';

runCommand(main);
