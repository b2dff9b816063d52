import { writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { ParamRegistry } from '@ssi/core';
import { defineModule } from '@ssi/core';
import { CheckpointStore, type CrmpiModule } from '@ssi/mpi';
import {
  BACKENDS,
  type BackendCommands,
  type BackendName,
  criuCommands,
  criuUnavailable,
  RESTORED_MARKER,
} from './backends';
import { runDetached } from './detached-command';
import { hookPoint } from './hooks';
import { CRMPI_EXTERNAL_PARAMS } from './params';
import { fillCommand, type ProcessPlace, placeEnv } from './placeholders';
import { decodeRecord, EXTERNAL_SECTION, type ExternalRecord, encodeRecord } from './record';
import { readContact, restoreFiles, writeJson } from './restore-files';
import { redirectOutput } from './restored-output';

/** The back end and its commands from the parameters, or why the module cannot run. */
function configure(
  params: ParamRegistry,
): { backend: BackendName; commands: BackendCommands | null } | string {
  const backend = params.get<string>('crmpi_external_backend') as BackendName;
  if (!BACKENDS.includes(backend)) {
    return `crmpi_external_backend is "${backend}"; expected one of ${BACKENDS.join(', ')}`;
  }
  if (backend === 'hooks') return { backend, commands: null };
  if (backend === 'criu') {
    const criu = params.get<string>('crmpi_external_criu');
    const why = criuUnavailable(criu);
    if (why !== null) return `back end criu: ${why}`;
    return {
      backend,
      commands: criuCommands(criu, params.get<string>('crmpi_external_criu_args')),
    };
  }
  const checkpoint = params.get<string>('crmpi_external_checkpoint_cmd');
  if (checkpoint.trim() === '') {
    return 'back end generic needs the command that saves a process: --ssi crmpi_external_checkpoint_cmd "<command with {pid} {image} ...>"';
  }
  return {
    backend,
    commands: { checkpoint, restart: params.get<string>('crmpi_external_restart_cmd') },
  };
}

/**
 * The rank half of `external` (Ch. 7.3.1's blcr module, AVS's quiescence hooks, seed `002_…`).
 * By the time `checkpoint` runs the cr base has frozen the job (freeze: the entry gate holds every
 * MPI call, the rpi drained every channel); the module hands this process to the checkpointer —
 * a command run on this node outside the process's tree (generic, criu) or the program's own
 * checkpointer (hooks) — and records what it did as this rank's file of the series. Whether the
 * process was restored meanwhile (`restored`) decides between unfreeze and restore.
 */
const crmpiExternal: CrmpiModule = defineModule<CrmpiModule>({
  ssiApi: '1.0.0',
  type: 'crmpi',
  typeApi: '1.0.0',
  name: 'external',
  version: '1.0.0',
  params: CRMPI_EXTERNAL_PARAMS,
  query(ctx) {
    const config = configure(ctx.params);
    if (typeof config === 'string') return config;
    return { priority: ctx.params.get<number>('crmpi_external_priority') };
  },
  init(ctx) {
    const config = configure(ctx.params);
    if (typeof config === 'string') throw new Error(`crmpi external: ${config}`);
    const timeoutMs = ctx.params.get<number>('crmpi_external_timeout') * 1000;
    const restoredSeries = new Set<number>();
    /** This process's directory in each series it saved (the restore files are there). */
    const homes = new Map<number, string>();
    let runner = 0;
    return {
      async checkpoint(work) {
        const { point } = work;
        const store = await CheckpointStore.open(point.dir);
        const home = join(store.seriesDir(point.series), `external-${point.rank}`);
        const place: ProcessPlace = {
          pid: process.pid,
          rank: point.rank,
          node: `n${process.env.LAM_MPI_NODE_ID ?? '?'}`,
          host: hostname(),
          image: join(home, 'image'),
          series: point.series,
          job: point.jobId,
        };
        await mkdir(place.image, { recursive: true, mode: 0o700 });
        homes.set(point.series, home);
        let record: ExternalRecord;
        if (config.commands === null) {
          const t0 = performance.now();
          const verdict = await withTimeout(
            hookPoint().handOver({ ...place, size: point.size }),
            timeoutMs,
            'the in-process checkpointer (a freeze() call or an onFreeze handler in the program) to unfreeze() or restore()',
          );
          if (verdict === 'restore') restoredSeries.add(point.series);
          record = { backend: 'hooks', place, verdict, ms: performance.now() - t0 };
        } else {
          const command = fillCommand(
            config.commands.checkpoint,
            place,
            'crmpi_external_checkpoint_cmd',
          );
          const ran = await runDetached(command, home, placeEnv(place), timeoutMs);
          if (ran.code !== 0) {
            throw new Error(
              `the checkpoint command exited with status ${ran.code}: ${command}${ran.stderr.trim() ? `\n${ran.stderr.trim()}` : ' (no stderr)'}`,
            );
          }
          ctx.verbose(10, `series ${point.series}: ${command} took ${ran.ms.toFixed(0)} ms`);
          const restored = await readFile(join(place.image, RESTORED_MARKER)).then(
            () => true,
            () => false,
          );
          if (restored) restoredSeries.add(point.series);
          // Restored into a new job from an image dumped by this command (CRIU): the series
          // is complete already; its file is not written again (the base joins the new job).
          if (await readContact(restoreFiles(home))) {
            return { rank: point.rank, file: '', bytes: 0, sha256: '' };
          }
          record = {
            backend: config.backend,
            place,
            command,
            code: ran.code,
            stderr: ran.stderr,
            restart: config.commands.restart
              ? fillCommand(config.commands.restart, place, 'crmpi_external_restart_cmd')
              : '',
            restartTemplate: config.commands.restart,
            verdict: restored ? 'restore' : 'unfreeze',
            ms: ran.ms,
          };
        }
        return store.writeRankFile(
          point.series,
          point.rank,
          [{ name: EXTERNAL_SECTION, bytes: encodeRecord(record) }],
          { jobId: point.jobId, size: point.size, module: 'external' },
        );
      },
      restored(series) {
        return restoredSeries.delete(series);
      },
      // After the job's last series: a restart of the images publishes the new job's contact
      // in this process's directory of the series (restore-runner.ts).
      async newJob(series) {
        const home = homes.get(series);
        const contact = home ? await readContact(restoreFiles(home)) : null;
        if (contact) runner = contact.runner;
        return contact;
      },
      async adopted(series) {
        const files = restoreFiles(homes.get(series)!);
        redirectOutput(files);
        process.once('exit', (code) => writeFileSync(files.exit, JSON.stringify(code)));
        await writeJson(files.attached, { pid: process.pid });
        watchRunner(runner);
        ctx.verbose(10, `series ${series}: restored into a new job (runner ${runner})`);
      },
      async restart(seriesDir, rank) {
        // The series holds process images: the program is not started again, the images are.
        const store = await CheckpointStore.open(dirname(seriesDir), { create: false });
        const series = Number(/series-(\d+)$/.exec(seriesDir)?.[1]);
        const file = await store.readRankFile(series, rank);
        const bytes = file.sections.get(EXTERNAL_SECTION);
        const record = bytes ? decodeRecord(bytes, `rank ${rank}'s file of ${seriesDir}`) : null;
        throw new Error(
          `${seriesDir} was written by the external cr module: it holds process images, which are ` +
            `restored by the checkpointer, not by starting the program again (lamrestart with the external cr module runs each rank's restart command); rank ${rank}'s restart command: ` +
            `${record?.restart || '(none recorded: crmpi_external_restart_cmd was not set)'}`,
        );
      },
    };
  },
});

/**
 * The runner stands for this process in the new job: when mpirun ends the job it kills the
 * runner (its process group, which this process is not in), and this process must go too.
 */
function watchRunner(pid: number): void {
  const timer = setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch {
      process.stderr.write(
        `the command standing for this process in its job (pid ${pid}) is gone; exiting\n`,
      );
      process.exit(1);
    }
  }, RUNNER_CHECK_MS);
  timer.unref();
}

/** How often a restored process checks that its runner is still there. */
const RUNNER_CHECK_MS = 500;

/** `p`, or an error naming what was awaited after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `timed out after ${Math.round(ms / 1000)} s waiting for ${what} (crmpi_external_timeout)`,
          ),
        ),
      ms,
    );
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export default crmpiExternal;
