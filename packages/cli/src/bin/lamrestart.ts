#!/usr/bin/env node
import { main } from '../commands/lamrestart';
import { runCommand } from '../run-command';

runCommand((argv) => main(argv));
