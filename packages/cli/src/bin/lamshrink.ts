#!/usr/bin/env node
import { main } from '../commands/lamshrink';
import { runCommand } from '../run-command';

runCommand(main);
