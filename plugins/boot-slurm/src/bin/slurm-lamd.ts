#!/usr/bin/env node
import { hostname } from 'node:os';
import { type HbootConfig, parseHbootConfig, runHbootInForeground } from '@ssi/lam';

/**
 * What the slurm boot module has srun start on every node (`srun --input=all … slurm-lamd.js`):
 * stdin carries one JSON object, node name → boot configuration (it holds the universe secret,
 * so it never goes on a command line or into a file); this task takes the entry of its node
 * (SLURMD_NODENAME) and runs it in the foreground, so the lamd is part of the job step.
 */
async function main(): Promise<number> {
  const node = process.env.SLURMD_NODENAME ?? hostname();
  const who = `slurm-lamd on ${node}`;
  let config: HbootConfig;
  try {
    const text = await readAll(process.stdin, 60_000);
    const all = JSON.parse(text) as Record<string, unknown>;
    if (!(node in all)) {
      throw new Error(
        `it has no entry for this node "${node}" (SLURMD_NODENAME), only for ${Object.keys(all).join(', ')}`,
      );
    }
    config = parseHbootConfig(JSON.stringify(all[node]));
  } catch (err) {
    process.stderr.write(`${who}: bad boot configuration on stdin: ${(err as Error).message}\n`);
    return 1;
  }
  return runHbootInForeground(config, who);
}

function readAll(stream: NodeJS.ReadableStream, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(new Error(`nothing complete within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => {
      text += d;
    });
    stream.on('end', () => {
      clearTimeout(timer);
      resolve(text);
    });
    stream.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

main().then((code) => {
  process.exitCode = code;
});
