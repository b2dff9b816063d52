import type { PluginSpec } from './plugin-files';

/**
 * The coll-specific part of a scaffolded module: `query`, `init` and two collectives written on
 * the communicator's collective context, so that the generated package is selected and runs
 * as it is, and shows where an author's own algorithms go. Everything it leaves out is
 * lam_basic's (the coll framework's fallback).
 */
export function collHelpers(): string {
  return `
/*
 * Collectives move data only by point-to-point on comm.coll: a twin of the user's communicator
 * with its own context, so these messages never match the user's. The tags are yours within
 * that context; stay clear of lam_basic's (1-23), whose functions run on the same context for
 * every collective this module leaves out.
 */
const TAG_BARRIER = 1001;
const TAG_BCAST = 1002;
const NOTHING = new Uint8Array(0);

/** Linear barrier: every rank checks in with rank 0, which then releases every rank. */
async function barrier(comm) {
  const c = comm.coll;
  if (c.size === 1) return;
  if (c.rank !== 0) {
    await c.send(NOTHING, 0, TAG_BARRIER);
    await c.recv(NOTHING, 0, TAG_BARRIER);
    return;
  }
  for (let r = 1; r < c.size; r++) await c.recv(NOTHING, r, TAG_BARRIER);
  await Promise.all(others(0, c.size).map((r) => c.isend(NOTHING, r, TAG_BARRIER).wait()));
}

/**
 * Linear broadcast: the root sends \`buf\` to every other rank, which receives into \`buf\`.
 * \`buf\` is bytes (Uint8Array): the MPI layer has already turned the user's value into bytes.
 */
async function bcast(comm, buf, root) {
  const c = comm.coll;
  if (c.size === 1) return;
  if (c.rank !== root) {
    await c.recv(buf, root, TAG_BCAST);
    return;
  }
  await Promise.all(others(root, c.size).map((r) => c.isend(buf, r, TAG_BCAST).wait()));
}

/** Every rank but \`me\`. */
function others(me, size) {
  return Array.from({ length: size }, (_, r) => r).filter((r) => r !== me);
}
`;
}

/** The `query` / `init` members of the coll module object. */
export function collMembers(spec: PluginSpec): string {
  return `
  /**
   * Asked about every new communicator (each process asks for its own, and all must answer
   * alike). Return { priority } to take it (the highest priority wins; lam_basic's is 10), or
   * null / a reason string to decline, e.g. for intercommunicators or sizes you do not handle.
   */
  query(comm, ctx) {
    return { priority: ctx.params.get('coll_${spec.name}_priority') };
  },

  /**
   * The collectives of \`comm\`: any subset of the coll interface (barrier, bcast, gather, ...,
   * reduce, allreduce, ...; intercommunicator variants end in "Inter"). Every function left out
   * is lam_basic's.
   */
  init(comm, ctx) {
    const actions = { barrier, bcast };
    ctx.verbose(
      10,
      \`\${comm.name}: ${spec.name} implements \${Object.keys(actions).join(', ')} (size \${comm.size})\`,
    );
    return actions;
  },

  /** \`comm\` is being freed: release what init made for it. */
  finalize(_comm) {},
`;
}
