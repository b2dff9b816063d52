import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { CheckpointStore, type JobRecord, type SeriesManifest } from '@ssi/mpi';
import { UsageError } from '../run-command';
import type { JobPart } from './args';

/** A job to start again from one complete series (`mpirun --cr-restart <series dir>`). */
export interface RestartJob {
  seriesDir: string;
  manifest: SeriesManifest;
  record: JobRecord;
}

/** Reads and verifies the series a restart uses; errors say what to run instead. */
export async function readRestart(seriesDir: string): Promise<RestartJob> {
  const dir = resolve(seriesDir);
  const m = /^series-(\d+)$/.exec(basename(dir));
  if (!m) {
    throw new UsageError(
      `--cr-restart ${seriesDir}: not a series directory (expected <checkpoint dir>/series-<n>); use lamrestart <checkpoint dir>`,
      1,
    );
  }
  const store = await CheckpointStore.open(dirname(dir), { create: false });
  const status = (await store.examine()).find((s) => s.series === Number(m[1]));
  if (!status?.complete) {
    throw new UsageError(
      `--cr-restart ${seriesDir}: series ${m[1]} cannot be used: ${status?.reason ?? 'it does not exist'}`,
      1,
    );
  }
  const manifest = status.manifest!;
  const record = manifest.app as JobRecord;
  if (!record || !Array.isArray(record.parts) || typeof record.ssiEnv !== 'object') {
    throw new UsageError(`${dir}: the manifest records no application schema to restart`, 1);
  }
  return { seriesDir: dir, manifest, record };
}

/**
 * The `--ssi` words of the checkpointed job that the restart's own command line does not set,
 * so the restarted ranks select the same modules (a restart may still change any of them).
 */
export function inheritedSsiArgs(record: JobRecord, argv: readonly string[]): string[] {
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--ssi' || argv[i] === '-ssi') given.add(argv[i + 1] ?? '');
  }
  const out: string[] = [];
  for (const [key, value] of Object.entries(record.ssiEnv)) {
    const name = key.replace(/^LAM_MPI_SSI_/, '');
    if (!given.has(name)) out.push('--ssi', name, value);
  }
  return out;
}

/** The parts of the restarted job: the recorded programs, on `where` when the user gave nodes. */
export function restartParts(record: JobRecord, where: JobPart['where']): JobPart[] {
  if (!existsSync(record.cwd)) {
    throw new UsageError(
      `the checkpointed job ran in ${record.cwd}, which does not exist here: its programs cannot be found`,
      1,
    );
  }
  return (record.parts as JobPart[]).map((p) => ({ ...p, where: where.length ? where : p.where }));
}
