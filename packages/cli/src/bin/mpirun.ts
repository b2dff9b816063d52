#!/usr/bin/env node
import { main } from '../commands/mpirun';
import { runCommand } from '../run-command';

runCommand(main);
