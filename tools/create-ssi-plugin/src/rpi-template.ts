import type { PluginSpec } from './plugin-files';

/** What a scaffolded rpi module builds on: its manifest declares it, its init opens it. */
export const RPI_TEMPLATE_REQUIRES = [
  { type: 'rpi', name: 'tcp', version: '1.0', package: '@ssi/rpi-tcp' },
];

/**
 * The rpi-specific part of a scaffolded module: `query` and `init`, built on the tcp module's
 * public transport surface (opened by name), so that the generated package is selected and
 * moves messages as it is, and shows where an author's own path goes: every action arrives here
 * first, and the template hands it to tcp. The MPI layer matches messages; an rpi moves bytes.
 */
export function rpiMembers(spec: PluginSpec): string {
  const requires = RPI_TEMPLATE_REQUIRES.map(
    (r) =>
      `{ type: '${r.type}', name: '${r.name}', version: '${r.version}', package: '${r.package}' }`,
  );
  return `
  /** Modules this one builds on: the same list as in package.json's manifest (checked). */
  requires: [${requires.join(', ')}],

  /**
   * Can this module run in this process, and at what priority? Return null or a reason string
   * to decline. (threadMin / threadMax: 0 = THREAD_SINGLE ... 3 = THREAD_MULTIPLE.)
   */
  query(ctx) {
    return { priority: ctx.params.get('rpi_${spec.name}_priority'), threadMin: 0, threadMax: 3 };
  },

  /**
   * Set up communication with \`procs\` and return the actions. This template opens the tcp
   * module by name (package.json "requires" it) and initializes it for every peer; to move
   * some peers' messages your own way, open tcp only for the others and route each action by
   * peer: sends by req.proc, unexpected messages by msg.proc (see @ssi/rpi-tcp's README,
   * "Building on tcp").
   */
  async init(procs, limits, host) {
    const tcp = await host.openModule('tcp');
    const transport = await tcp.init(procs, limits, host);
    let sends = 0;
    host.verbose(10, \`${spec.name}: moving messages through tcp to \${procs.length - 1} peers\`);
    const actions = {
      addprocs: (more) => transport.addprocs(more),
      async finalize(proc) {
        if (!proc) host.verbose(10, \`${spec.name}: \${sends} sends started\`);
        return transport.finalize(proc);
      },
      build: (req) => transport.build(req),
      start(req) {
        sends++;
        transport.start(req);
      },
      matched: (req, msg) => transport.matched(req, msg),
      advance: (block) => transport.advance(block),
      destroy: (req) => transport.destroy(req),
      cancel: (req) => transport.cancel(req),
    };
    if (transport.fastsend) {
      actions.fastsend = (req) => {
        const done = transport.fastsend(req);
        if (done) sends++;
        return done;
      };
    }
    // The optional actions: offer exactly those tcp offers, since the MPI layer changes what it
    // does by whether they exist (posted: credits; polling: advance is called while it waits;
    // interrupt...restart: the job can be checkpointed).
    const optional = ['posted', 'unposted', 'allocMem', 'freeMem', 'interrupt', 'checkpoint', 'continue', 'restart'];
    for (const name of optional) {
      if (typeof transport[name] === 'function') actions[name] = (...args) => transport[name](...args);
    }
    if (transport.polling) actions.polling = true;
    return actions;
  },
`;
}
