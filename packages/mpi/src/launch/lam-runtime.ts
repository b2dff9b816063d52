import { ParamRegistry } from '@ssi/core';
import { LamClient, type OobAddress, withDeadline } from '@ssi/lam';
import { RankControl } from '../control/rank-control';
import { ErrorClass, MpiError } from '../errors';
import type { Gps, JobContact, JobRuntime } from '../job-runtime';
import { registerMpiParams } from '../params';
import { restoreDeferredCaCerts } from './deferred-ca-certs';
import type { AbortMsg, GatheredMsg, GatherMsg, HelloMsg, RosterMsg } from './hub-protocol';
import { HUB_ENV, HubTag, parseAddress, RANK_OOB_TAG_BASE } from './hub-protocol';
import { readJobEnvironment } from './job-env';
import { JobHub } from './job-hub';

type Env = Record<string, string | undefined>;

const LAUNCHER = 'mpirun (through a lamd)';

/**
 * The JobRuntime of a process `mpirun` started through the lamds: a LAM client attached to the
 * local lamd under this process's pid. The GPS exchange and finalize go through the job's hub
 * (mpirun, or this very process when it is rank 0 of an `mpirun -nw` job); rank-to-rank
 * out-of-band messages go straight to the other rank's address.
 */
export async function connectLamRuntime(env: Env = process.env): Promise<JobRuntime> {
  let job = readJobEnvironment(env, LAUNCHER);
  restoreDeferredCaCerts(env);
  const params = new ParamRegistry({ env });
  registerMpiParams(params);
  const initTimeoutMs = params.get<number>('mpi_base_init_timeout');
  const hubSetting = env[HUB_ENV.HUB];
  if (!hubSetting) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${HUB_ENV.HUB} is not set: start this program with mpirun`,
    );
  }
  let client = await LamClient.connect({ env, proc: process.pid, name: `rank ${job.rank}` });
  client.unref();
  let hub: JobHub | undefined;
  let everyoneFinalized: () => void = () => {};
  /** rank 0 as the hub (mpirun -nw) stays until every rank finalized: they need its answers. */
  const allFinalized = new Promise<void>((resolve) => {
    everyoneFinalized = resolve;
  });
  let hubAddress: OobAddress;
  if (hubSetting === 'self') {
    hub = new JobHub(client, job.jobId, job.size, {
      onAbort: (a) => void killJobAndExit(client, hub!, a),
      onFinalized: () => {
        if (hub!.finalized.size === job.size) everyoneFinalized();
      },
    });
    hub.start();
    hubAddress = client.address;
  } else {
    hubAddress = parseAddress(hubSetting, HUB_ENV.HUB);
  }

  let finishing = false;
  /** Adoption (a process image kept after its job's last series): the lamd may go, see below. */
  let mayOutliveJob = false;
  let lost = false;
  const watchLamd = (c: LamClient) =>
    c.on('close', (reason: string) => {
      if (finishing || c !== client) return;
      lost = true;
      if (mayOutliveJob) return;
      process.stderr.write(`rank ${job.rank}: lost the local lamd (${reason}); exiting\n`);
      process.exit(1);
    });
  watchLamd(client);

  const within = <T>(p: Promise<T>, what: string): Promise<T> =>
    withDeadline(
      p,
      initTimeoutMs,
      () =>
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rank ${job.rank}: no ${what} within ${initTimeoutMs} ms (mpi_base_init_timeout)`,
        ),
    );

  /** Says hello to the hub: every rank's address comes back once every rank of the job did. */
  const greet = async (): Promise<OobAddress[]> => {
    const hello: HelloMsg = { jobId: job.jobId, rank: job.rank, address: client.address };
    await client.send(hubAddress, HubTag.HELLO, hello);
    const roster = (
      await within(
        client.recv({ tag: HubTag.ROSTER, from: hubAddress }),
        'roster from the job hub (every rank must start)',
      )
    ).data as RosterMsg;
    return roster.addresses;
  };
  let addresses = await greet();
  const control = new RankControl(
    job.rank,
    (msg) => client.send(hubAddress, HubTag.CONTROL_UP, msg),
    (why) => process.stderr.write(`rank ${job.rank}: control: ${why}\n`),
  );
  const listen = (c: LamClient, from: OobAddress) =>
    void (async () => {
      while (!c.closed) {
        let m: { data: unknown };
        try {
          m = await c.recv({ tag: HubTag.CONTROL_DOWN, from });
        } catch {
          return; // the client closed: finalize, or the lamd is gone (handled on 'close')
        }
        control.deliver(m.data);
      }
    })();
  listen(client, hubAddress);

  let round = 0;
  const gps: Gps = { node: job.node, pid: process.pid, index: client.proc, grank: job.rank };
  return {
    get jobId() {
      return job.jobId;
    },
    get secret() {
      return job.secret;
    },
    rank: job.rank,
    size: job.size,
    gps,
    get host() {
      return job.host;
    },
    get nodeName() {
      return job.nodeName;
    },
    control,
    adoption: {
      mayOutliveJob() {
        mayOutliveJob = true;
      },
      get lost() {
        return lost;
      },
      async join(contact: JobContact): Promise<void> {
        const next = readJobEnvironment(contact.env, 'a restart of this process image');
        if (next.rank !== job.rank || next.size !== job.size) {
          throw new MpiError(
            ErrorClass.ERR_OTHER,
            `the new job wants this process as rank ${next.rank} of ${next.size}; it is rank ${job.rank} of ${job.size}`,
          );
        }
        const old = client;
        client = await LamClient.connect({
          sessionDir: contact.sessionDir,
          proc: process.pid,
          name: `rank ${next.rank}`,
        });
        client.unref();
        watchLamd(client);
        old.close();
        job = next;
        hubAddress = parseAddress(contact.env[HUB_ENV.HUB] ?? '', HUB_ENV.HUB);
        round = 0;
        addresses = await greet();
        listen(client, hubAddress);
        gps.node = job.node;
        gps.index = client.proc;
        mayOutliveJob = false;
        lost = false;
      },
    },
    async allgather<T>(value: T): Promise<T[]> {
      const r = ++round;
      const msg: GatherMsg = { rank: job.rank, round: r, value };
      await client.send(hubAddress, HubTag.GATHER, msg);
      const m = await client.recv({ tag: HubTag.GATHERED, from: hubAddress });
      const got = m.data as GatheredMsg;
      if (got.round !== r) {
        throw new MpiError(
          ErrorClass.ERR_INTERN,
          `gather round ${got.round} arrived, ${r} expected`,
        );
      }
      return got.values as T[];
    },
    async oobSend(to: number, tag: number, value: unknown): Promise<void> {
      await client.send(addressOf(addresses, to), RANK_OOB_TAG_BASE + tag, value);
    },
    async oobRecv<T>(from: number, tag: number): Promise<T> {
      const m = await client.recv({
        from: addressOf(addresses, from),
        tag: RANK_OOB_TAG_BASE + tag,
      });
      return m.data as T;
    },
    async abort(
      code: number,
      message: string,
      details: { peerLost?: boolean } = {},
    ): Promise<never> {
      finishing = true;
      const msg: AbortMsg = { rank: job.rank, code, message, peerLost: !!details.peerLost };
      if (hub) await killJobAndExit(client, hub, msg);
      await client.send(hubAddress, HubTag.ABORT, msg).catch(() => {});
      // The hub kills this process with the rest; exit on our own if that does not come. The
      // timer is ref'd: the process must not end before the abort has done its work.
      setTimeout(() => process.exit(code || 1), 5000);
      return new Promise<never>(() => {});
    },
    async finalize(): Promise<void> {
      finishing = true;
      control.close();
      await client.send(hubAddress, HubTag.FIN, { rank: job.rank });
      await client.recv({ tag: HubTag.FINACK, from: hubAddress });
      if (hub) {
        // Bounded: a rank that died before finalizing must not keep this one forever.
        await withDeadline(allFinalized, initTimeoutMs, () => new Error('finalize')).catch(
          () => {},
        );
        hub.stop();
      }
      client.close();
    },
  };
}

function addressOf(addresses: OobAddress[], rank: number): OobAddress {
  const a = addresses[rank];
  if (!a)
    throw new MpiError(ErrorClass.ERR_RANK, `no rank ${rank} in this job of ${addresses.length}`);
  return a;
}

/** rank 0 as the hub (mpirun -nw): nobody else can end the job, so it does it itself. */
async function killJobAndExit(client: LamClient, hub: JobHub, a: AbortMsg): Promise<never> {
  process.stderr.write(`mpirun: ${a.message}\n`);
  await Promise.allSettled(
    hub.addresses.map((addr) =>
      addr && addr.proc !== process.pid ? client.signal(addr.node, addr.proc, 'SIGKILL') : null,
    ),
  );
  process.exit(a.code || 1);
}
