import { launchJob } from '@ssi/mpi/testing';

const [coll, op, bytes, iters, ...extra] = process.argv.slice(2);
const perNode = [2, 2];
const nodeOf = perNode.flatMap((n, node) => new Array(n).fill(node));
const ssi = { rpi: 'sm', coll };
for (let i = 0; i < extra.length; i += 2) ssi[extra[i]] = extra[i + 1];
const r = await launchJob({
  np: nodeOf.length,
  rankEnv: (rank) => ({
    SSI_NODE_ID: String(nodeOf[rank]),
    SSI_NODE_NAME: `h${nodeOf[rank]}`,
    SSI_HOST_ADDR: `127.0.0.${nodeOf[rank] + 2}`,
    SSI_MAX_NODE_RANKS: '2',
  }),
  program: new URL('./prog.mjs', import.meta.url).pathname,
  args: [op, bytes, iters],
  ssi,
  timeoutMs: 120000,
  label: 'exp',
});
const line = r.output.split('\n').find((l) => l.includes('RESULT'));
console.log(coll, JSON.stringify(extra), line ?? r.output.slice(-2000));
if (process.env.SHOW)
  console.log(
    r.output
      .split('\n')
      .filter((l) => l.includes(process.env.SHOW))
      .join('\n'),
  );
