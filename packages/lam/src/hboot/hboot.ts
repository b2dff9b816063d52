import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { isLamError, LamError } from '../errors';
import { lamBin, lamVersion } from '../package-paths';
import { readStdin } from '../stdin';
import { type LamdConfig, parseHbootConfig } from './hboot-config';
import { wipeSession } from './wipe';

/**
 * hboot: what a boot module runs on a node (LAM's hboot). It reads its job from stdin and
 *  - lamd: starts the lamd in its own session, passes it its configuration, waits until it
 *    listens, prints "lamd <pid> <port>" and exits, so that the remote shell returns while the
 *    lamd lives on;
 *  - recon: proves the installation runs here ("recon ok ...");
 *  - wipe: takes down a universe's leftovers here ("wipe ...").
 * Failures are one line on stderr and a non-zero exit.
 */
export async function hbootMain(): Promise<number> {
  try {
    const config = parseHbootConfig(await readStdin(30_000));
    switch (config.mode) {
      case 'lamd':
        return await startLamd(config.lamd);
      case 'recon':
        process.stdout.write(
          `recon ok ${config.nodeName} lam ${lamVersion()} node ${process.version}\n`,
        );
        return 0;
      case 'wipe': {
        const r = await wipeSession(config.nodeName, config.sessionSuffix);
        const what = r.removed
          ? `lamd ${r.lamd}, ${r.processes} process(es) killed, ${r.sessionDir} removed`
          : `nothing to wipe (no ${r.sessionDir})`;
        process.stdout.write(`wipe ${config.nodeName}: ${what}\n`);
        return 0;
      }
    }
  } catch (err) {
    process.stderr.write(`hboot: ${isLamError(err) ? err.message : (err as Error).stack}\n`);
    return 1;
  }
}

function startLamd(config: LamdConfig): Promise<number> {
  const child = spawn(process.execPath, [lamBin('lamd')], {
    detached: true, // its own session: the end of the remote shell does not reach it
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin!.on('error', () => {});
  child.stdin!.end(`${JSON.stringify(config)}\n`);
  const timeoutMs = config.bootTimeout * 1000;
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(() =>
        reject(
          new LamError(
            'TIMEOUT',
            `the lamd on ${config.nodeName} did not start within ${config.bootTimeout} s`,
          ),
        ),
      );
    }, timeoutMs);
    const done = (then: () => void) => {
      clearTimeout(timer);
      lines.close();
      child.stdout!.destroy(); // the lamd lives on; hboot must not wait for its stdout
      child.removeAllListeners('exit');
      then();
    };
    lines.on('line', (line) => {
      const ready = /^ready (\d+) (\d+)$/.exec(line);
      if (ready) {
        done(() => {
          process.stdout.write(`lamd ${ready[1]} ${ready[2]}\n`);
          child.unref();
          resolve(0);
        });
      } else if (line.startsWith('error ')) {
        done(() => {
          process.stderr.write(`hboot: ${line.slice(6)}\n`);
          resolve(1);
        });
      }
    });
    child.once('exit', (code, signal) =>
      done(() => {
        process.stderr.write(
          `hboot: the lamd on ${config.nodeName} exited before it was ready (${signal ?? `exit ${code}`})\n`,
        );
        resolve(1);
      }),
    );
    child.once('error', (err) =>
      done(() => {
        process.stderr.write(`hboot: cannot start the lamd: ${err.message}\n`);
        resolve(1);
      }),
    );
  });
}
