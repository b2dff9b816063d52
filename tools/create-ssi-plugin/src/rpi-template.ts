import { readFileSync } from 'node:fs';
import type { PluginSpec } from './plugin-files';

/**
 * The rpi template: a minimal transport of its own (TCP sockets, one per pair of processes,
 * length-prefixed frames, eager sends, acknowledgements for synchronous sends, cancel). Its
 * protocol files are plain JavaScript in `templates/rpi/` (checked by this package's typecheck
 * and lint, copied as they are); only `index.js`, which names the module, is generated here.
 */
export const RPI_TEMPLATE_FILES = ['frames.js', 'connections.js', 'transport.js'] as const;

/** The text of one of the template's files (beside `src/` and `dist/`, in the package). */
export function rpiTemplateFile(file: (typeof RPI_TEMPLATE_FILES)[number]): string {
  return readFileSync(new URL(`../templates/rpi/${file}`, import.meta.url), 'utf8');
}

export function rpiImports(): string {
  return `import { Transport } from './transport.js';\n`;
}

/** The parameters of a scaffolded rpi module, as `params` entries (a table in the README too). */
export function rpiParams(spec: PluginSpec): string {
  return `params: {
    priority: { type: 'int', default: 10, help: 'Selection priority of ${spec.name} (0-100); tcp has 20' },
    short: {
      type: 'int',
      default: 65536,
      help: 'Sends up to this many bytes complete once written; longer ones, like ssend, once the receiver matched them',
    },
    connect_timeout: {
      type: 'int',
      default: 30000,
      help: 'Milliseconds MPI.init waits for every peer to connect before it fails',
    },
  },`;
}

/** \`query\` and \`init\` of a scaffolded rpi module. */
export function rpiMembers(spec: PluginSpec): string {
  return `
  /**
   * Can this module run in this process, and at what priority? Return null or a reason string
   * to decline. (threadMin / threadMax: 0 = THREAD_SINGLE ... 3 = THREAD_MULTIPLE.) The highest
   * priority wins; \`--ssi rpi ${spec.name}\` selects this module whatever the priorities.
   */
  query(ctx) {
    return { priority: ctx.params.get('rpi_${spec.name}_priority'), threadMin: 0, threadMax: 3 };
  },

  /**
   * The module was selected: connect to \`procs\` (the process list, the same order in every
   * process) and return the actions (\`RpiActions\` of @ssi/mpi). \`limits\` (largest tag and
   * context id) may be lowered here, never raised; this transport carries both in full.
   */
  async init(procs, _limits, host) {
    const transport = new Transport('${spec.name}', host, {
      short: Math.max(0, host.params.get('rpi_${spec.name}_short')),
      connectTimeout: Math.max(1, host.params.get('rpi_${spec.name}_connect_timeout')),
    });
    await transport.addprocs(procs);
    return transport;
  },
`;
}

/** The README's parameter table and its walk-through of the transport. */
export function rpiReadme(spec: PluginSpec): string {
  const p = `rpi_${spec.name}`;
  return `## Parameters

| name | type | default | meaning |
|---|---|---|---|
| \`${p}_priority\` | int | 10 | selection priority (0-100); tcp's is 20, so select this one with \`--ssi rpi ${spec.name}\` |
| \`${p}_short\` | int | 65536 | a standard send of up to this many bytes completes once written; a longer one, like every \`ssend\`, once the receiver matched it (negative: 0) |
| \`${p}_connect_timeout\` | int | 30000 | milliseconds \`MPI.init\` waits for every peer to connect before it fails, naming them (at least 1) |

## Try it

    npx mpirun -np 4 --ssi rpi ${spec.name} --ssi rpi_verbose 10 app.mjs

With \`rpi_verbose 10\` every rank says where it listens, how many peers it connected to, and at
the end how many messages it sent and received.

## How it works

A transport of its own, written to be read: TCP sockets from Node's \`net\`, one per pair of
processes, and a few kinds of frames. Everything else — matching, the unexpected-message queue,
ANY_SOURCE, probes, sends to self, truncation status — is the MPI layer's (\`@ssi/mpi\`).

| file | what |
|---|---|
| \`index.js\` | the module object: parameters, \`query\`, \`init\` |
| \`connections.js\` | address exchange (one allgather), connection set-up in process-list order, the authenticated HELLO |
| \`frames.js\` | the wire format (a u32 length, a 32-byte envelope, the payload); the reader that cuts the byte stream back into frames |
| \`transport.js\` | the protocol: sends, arriving messages, acknowledgements, cancel, lost peers (\`RpiActions\`) |

- **Address exchange**: in \`init\` every process listens on its node's address and publishes
  \`{ host, port }\` with \`host.runtime.allgather\`; it dials the processes before it in the
  process list and accepts those after it. A dialer's first frame (HELLO) proves it knows the
  job's secret; any other connection is dropped. A peer missing after
  \`${p}_connect_timeout\` fails \`MPI.init\`, naming it.
- **The envelope** in front of every payload: what matching needs (context id \`cid\`, the
  sender's \`rank\` in the communicator, \`tag\`, data \`kind\`, sequence number \`seq\`; the
  length is the frame's) and what the protocol needs: the frame's \`op\` (HELLO, MESSAGE, ACK,
  CANCEL, CANCEL_REPLY), \`flags\` (SYNC, CANCELLED) and \`sendId\`, the sender's request id,
  which acknowledgements and cancel answers echo.
- **Sends** go out at once as one MESSAGE frame (envelope + a copy of the bytes). A standard
  send of up to \`${p}_short\` bytes is then complete. An \`ssend\`, and any longer send,
  completes when the receiver acknowledges (ACK) that a receive matched it.
- **Arriving messages** are handed to \`host.matchPosted\` in the order each peer sent them (one
  connection per pair keeps that order); what matches nothing is queued with
  \`host.queueUnexpected\` and comes back to \`matched\` when a receive takes it. The receiver
  sends the ACK of a synchronous message at the match.
- **ANY_SOURCE, truncation**: matching (the MPI layer's) picks the receive across all peers and
  records how many bytes fit (\`req.stLength\`) and the truncation error; the transport copies
  that many bytes (\`deliverBytes\`) and completes the receive.
- **Cancel**: a send still waiting for its ACK asks the receiver (CANCEL); the receiver takes
  the message back with \`host.withdrawUnexpected\` if no receive has taken it, and answers.
- **The request life cycle**: \`host.complete(req)\` once per start — at the write, at the ACK
  or at a CANCELLED answer; \`destroy\` forgets a request.
- **Lost peers**: a connection that ends outside \`MPI.finalize\` is reported with
  \`host.peerFailed\`.

What a production transport adds: a rendezvous for long messages (ask first, then send the body
straight into the receive buffer) instead of buffering them at the receiver, connections on
first use, shared memory between ranks of one node. \`docs/writing-an-rpi-module.md\` of SSI for
Node has the contract in prose, how to run \`@ssi/mpi/testing\`'s conformance suite against
this module, and "Building on tcp": how a module that carries only some peers its own way leaves
the others to the tcp module instead of writing all of this.
`;
}
