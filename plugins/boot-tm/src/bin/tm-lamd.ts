#!/usr/bin/env node
import { readFileSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { type HbootConfig, parseHbootConfig, runHbootInForeground } from '@ssi/lam';

/**
 * What the tm boot module has PBS start on each node (`pbsdsh -h <node> node tm-lamd.js FILE`):
 * FILE holds this node's boot configuration (it carries the universe secret, so it is mode
 * 0600 and never on a command line); it is read and deleted at once, then the lamd runs in
 * the foreground as PBS's task.
 */
async function main(): Promise<number> {
  const who = `tm-lamd on ${hostname()}`;
  const file = process.argv[2];
  if (!file) {
    process.stderr.write(`${who}: usage: tm-lamd.js <boot configuration file>\n`);
    return 2;
  }
  let config: HbootConfig;
  try {
    const text = readFileSync(file, 'utf8');
    unlinkSync(file);
    config = parseHbootConfig(text);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint =
      e.code === 'ENOENT'
        ? '; is boot_tm_spool_dir on a file system that every node of the job shares?'
        : '';
    process.stderr.write(
      `${who}: cannot read the boot configuration ${file}: ${e.message}${hint}\n`,
    );
    return 1;
  }
  return runHbootInForeground(config, who);
}

main().then((code) => {
  process.exitCode = code;
});
