import { ParamRegistry } from '@ssi/core';
import { sendLamdInfo } from '../boot/rendezvous';
import { isLamError } from '../errors';
import { checkLamdConfig, type LamdConfig } from '../hboot/hboot-config';
import { registerLamParams } from '../params';
import { readStdin } from '../stdin';
import { Lamd } from './lamd';

/**
 * The lamd process: read the configuration from stdin (hboot writes it), start, tell hboot
 * "ready <pid> <port>" on stdout, call lamboot back, wait for the universe, then serve until
 * halted or signalled. Any failure before "ready" is one line "error <message>" for hboot.
 */
export async function lamdMain(): Promise<void> {
  let config: LamdConfig;
  try {
    config = checkLamdConfig(JSON.parse(await readStdin(30_000)));
  } catch (err) {
    return fail(`bad configuration: ${(err as Error).message}`);
  }
  const params = new ParamRegistry({ env: { ...process.env, ...config.ssiEnv } });
  registerLamParams(params);
  let lamd: Lamd;
  let port: number;
  try {
    lamd = new Lamd(config, params);
    port = await lamd.start();
  } catch (err) {
    return fail(isLamError(err) ? err.message : String((err as Error).stack ?? err));
  }
  installHandlers(lamd);
  process.stdout.write(`ready ${process.pid} ${port}\n`);
  process.stdout.end();
  try {
    await sendLamdInfo(
      config.rendezvous,
      {
        node: config.nodeId,
        name: config.nodeName,
        address: config.address,
        port,
        pid: process.pid,
      },
      lamd.secret,
      config.bootTimeout * 1000,
    );
    await lamd.waitForUniverse();
  } catch (err) {
    await lamd.shutdown(`boot failed: ${(err as Error).message}`, 1);
  }
  process.exit(await lamd.finished);
}

function fail(message: string): void {
  process.stdout.write(`error ${message.replace(/\n/g, ' ')}\n`);
  process.exitCode = 1;
}

function installHandlers(lamd: Lamd): void {
  const stop = (sig: string) => () => void lamd.shutdown(`received ${sig}`);
  process.on('SIGTERM', stop('SIGTERM'));
  process.on('SIGINT', stop('SIGINT'));
  // A daemon: the end of the remote shell session that started it is not a reason to stop.
  process.on('SIGHUP', () => lamd.log.info('ignoring SIGHUP'));
  process.on('uncaughtException', (err) => {
    lamd.log.warn(`internal error: ${err.stack ?? err}`);
    void lamd.shutdown('internal error', 70);
  });
  process.on('unhandledRejection', (err) => {
    lamd.log.warn(`internal error (promise): ${(err as Error)?.stack ?? err}`);
  });
}
