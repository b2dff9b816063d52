import type { BenchCommand } from '../harness';
import { bootCommand } from './boot';
import { collCommand } from './coll';
import { crCommand } from './cr';
import { pingpongCommand } from './pingpong';
import { pingpongVectorCommand } from './pingpong-vector';
import { shmCommand } from './shm';
import { startupCommand } from './startup';

/**
 * Every subcommand of ssi-bench. To add one (pingpong, coll, ...): write
 * src/commands/<name>.ts exporting a BenchCommand that measures with `repeat`, prints with
 * `formatTable` and saves with `writeResults`, then list it here.
 */
export const COMMANDS: BenchCommand[] = [
  shmCommand,
  bootCommand,
  pingpongCommand,
  pingpongVectorCommand,
  collCommand,
  crCommand,
  startupCommand,
];
