import type { Proc, RpiActions, RpiHost, RpiModule, RpiRequest } from '../../src/index';
import { Matcher, RankControl, ReqType, SelfChannel } from '../../src/index';
import type { JobRuntime } from '../../src/job-runtime';

/**
 * A one-process rpi for in-process tests: every message goes to self through the rpi base
 * (Matcher + SelfChannel). With `checkpoint`, it implements the quartet and logs each phase.
 */
export function loopRpi(options: { checkpoint?: boolean } = {}) {
  const log: string[] = [];
  let host!: RpiHost;
  const module: RpiModule = {
    ssiApi: '1.0.0',
    type: 'rpi',
    typeApi: '1.1.0',
    name: 'loop',
    version: '1.0.0',
    query: () => ({ priority: 50, threadMin: 0, threadMax: 3 }),
    async init(_procs: Proc[], limits, h) {
      host = h;
      limits.maxTag = 65535; // modules may lower the limits
      const matcher = new Matcher(() => h.arrived());
      const self = new SelfChannel(matcher, h, 1024);
      const actions: RpiActions = {
        addprocs: async () => {},
        finalize: async () => {
          log.push('finalize');
        },
        build: () => {},
        start(req: RpiRequest) {
          log.push(`start ${req.type === ReqType.RECV ? 'recv' : 'send'} tag ${req.tag}`);
          if (req.type === ReqType.RECV) {
            const m = matcher.takeUnexpected(req);
            if (m) self.receive(req, m);
            else matcher.post(req);
          } else self.send(req);
        },
        advance: () => false,
        destroy: () => {},
        iprobe(req) {
          const m = matcher.findUnexpected(req);
          if (!m) return false;
          req.stSource = m.rank;
          req.stTag = m.tag;
          req.stLength = m.length;
          req.stKind = m.kind;
          return true;
        },
        cancel(req) {
          if (req.type === ReqType.RECV) {
            if (matcher.unpost(req)) {
              req.cancelled = true;
              h.complete(req);
            }
          } else self.cancel(req);
        },
      };
      if (options.checkpoint) {
        actions.interrupt = async () => void log.push('interrupt');
        actions.checkpoint = async () => void log.push('checkpoint');
        actions.continue = async () => void log.push('continue');
        actions.restart = async () => void log.push('restart');
      }
      return actions;
    },
  };
  return { module, log, host: () => host };
}

/** A JobRuntime for a job of one process, recording aborts instead of exiting. */
export function soloRuntime() {
  const aborts: { code: number; message: string }[] = [];
  let gathers = 0;
  const runtime: JobRuntime = {
    jobId: 'in-process',
    secret: new Uint8Array(32),
    rank: 0,
    size: 1,
    gps: { node: 0, pid: process.pid, index: 0, grank: 0 },
    host: '127.0.0.1',
    nodeName: 'here',
    control: new RankControl(
      0,
      async () => {
        throw new Error('no launcher in an in-process test');
      },
      () => {},
    ),
    allgather: async (v) => {
      gathers++;
      return [v];
    },
    oobSend: async () => {
      throw new Error('no peers');
    },
    oobRecv: () => new Promise(() => {}),
    abort: (code, message) => {
      aborts.push({ code, message });
      return new Promise<never>(() => {});
    },
    finalize: async () => {},
  };
  return { runtime, aborts, gathers: () => gathers };
}
