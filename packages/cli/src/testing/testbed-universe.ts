import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lamBin, wipeSession } from '@ssi/lam';
import type { Testbed, TestHost } from '@ssi/testbed';
import { type CliOptions, type Ran, runCli } from './cli-process';

export interface TestbedUniverseOptions {
  /** how many test hosts (one sshd per loopback address) */
  hosts: number;
  /** names the session suffix (`<name>-<pid>`) and the work directory (`ssi-<name>-*`) */
  name: string;
  /** more of a host's boot schema line after its address, e.g. `() => 'cpu=2'` */
  perHost?: (h: TestHost) => string;
}

/** A LAM universe booted with lamboot over real test hosts; `halt()` ends all of it. */
export interface TestbedUniverse {
  readonly testbed: Testbed;
  /** a private directory (made here, removed by `halt`): the commands' cwd, for checkpoints */
  readonly work: string;
  /** the session suffix of this universe: its lamds are apart from every other universe's */
  readonly suffix: string;
  /** the environment a user of this universe has: session host/suffix, the rsh agent */
  env(): NodeJS.ProcessEnv;
  /** runs a command of @ssi/cli in this universe (cwd `work`, timeout 120 s unless given) */
  run(command: string, args: string[], opts?: CliOptions): Promise<Ran>;
  /** lamhalt, then wipes each host's session directory, stops the sshds and removes `work` */
  halt(): Promise<void>;
}

/**
 * Starts `hosts` test hosts and boots a universe on them with lamboot over ssh: hboot is found
 * through a prefix on each schema line (the test hosts share this machine's files). Fails with
 * lamboot's output if the boot fails, having stopped everything it started.
 */
export async function bootTestbedUniverse(opts: TestbedUniverseOptions): Promise<TestbedUniverse> {
  // Imported here so that tests that never boot a universe do not need @ssi/testbed.
  const { startTestbed } = await import('@ssi/testbed');
  const work = mkdtempSync(join(tmpdir(), `ssi-${opts.name}-`));
  const suffix = `${opts.name}-${process.pid}`;
  let testbed: Testbed | undefined;
  try {
    const prefix = join(work, 'prefix');
    mkdirSync(join(prefix, 'bin'), { recursive: true });
    symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
    testbed = await startTestbed({ hosts: opts.hosts });
    const universe = makeUniverse(testbed, work, suffix);
    const schema = testbed.writeBootSchema(join(work, 'hosts'), {
      perHost: (h) => `${opts.perHost?.(h) ?? ''} prefix=${prefix}`.trim(),
    });
    const boot = await universe.run('lamboot', [schema]);
    if (boot.code !== 0) {
      await universe.halt();
      throw new Error(
        `lamboot over ${opts.hosts} test hosts failed:\n${boot.stdout}\n${boot.stderr}`,
      );
    }
    return universe;
  } catch (err) {
    await testbed?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
}

function makeUniverse(testbed: Testbed, work: string, suffix: string): TestbedUniverse {
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    LAM_MPI_SESSION_HOST: testbed.hosts[0]!.address,
    LAM_MPI_SESSION_SUFFIX: suffix,
    LAM_MPI_SSI_boot_rsh_agent: testbed.sshCommand.join(' '),
    LAM_MPI_SSI_boot_base_timeout: '20',
  });
  const run = (command: string, args: string[], o: CliOptions = {}) =>
    runCli(command, args, env(), { cwd: work, timeoutMs: 120_000, ...o });
  let halted = false;
  return {
    testbed,
    work,
    suffix,
    env,
    run,
    async halt() {
      if (halted) return;
      halted = true;
      // A lamhalt that fails (a lamd already gone) still leaves the wipe and the stop to do.
      await run('lamhalt', [], { timeoutMs: 60_000 }).catch(() => {});
      for (const h of testbed.hosts) await wipeSession(h.address, suffix, 2000);
      await testbed.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
