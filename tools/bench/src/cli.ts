#!/usr/bin/env node
import { COMMANDS } from './commands/index';
import { runPeer } from './commands/shm-peers';

function list(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: node tools/bench/dist/cli.js <benchmark> [options]   (--help after a name for its options)',
    '',
    'benchmarks:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
    '',
    'Results: a table on stdout and JSON in tools/bench/results/<benchmark>-<timestamp>.json',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '__peer') return runPeer(rest); // internal: the other side of a ping-pong
  if (name === undefined || name === '-h' || name === '--help') {
    console.log(list());
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    console.error(`ssi-bench: no benchmark "${name}"\n\n${list()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(cmd.usage);
    return 0;
  }
  return cmd.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`ssi-bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
