#!/usr/bin/env node
import { main } from '../commands/lamgrow';
import { runCommand } from '../run-command';

runCommand(main);
