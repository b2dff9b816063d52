import { describe, expect, it } from 'vitest';
import type { ControlDown, ControlUp } from '../src/index';
import { HubControl, parseControlDown, parseControlUp, RankControl } from '../src/index';

/**
 * Both ends of the job control channel wired back to back in one process (the transports, OOB
 * and the test launcher's socket, are covered by real-process tests in @ssi/cli and here by
 * launcher.test.ts): validation, answers, holding, closing.
 */
function pair(size = 2) {
  const rankReports: string[] = [];
  const hubReports: string[] = [];
  const ranks: RankControl[] = [];
  const hub = new HubControl(
    size,
    (rank, msg: ControlDown) => queueMicrotask(() => ranks[rank]!.deliver(msg)),
    (why) => hubReports.push(why),
  );
  for (let r = 0; r < size; r++) {
    ranks.push(
      new RankControl(
        r,
        async (msg: ControlUp) => queueMicrotask(() => hub.receive(parseControlUp(msg, size))),
        (why) => rankReports.push(`${r}: ${why}`),
      ),
    );
  }
  return { hub, ranks, rankReports, hubReports };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('job control channel ends', () => {
  it('answers asks with what the handler returns, async ones too', async () => {
    const { hub, ranks } = pair();
    hub.connected(0);
    hub.connected(1);
    hub.on('tool.sum', (rank, p) => rank + (p as number));
    hub.on('tool.later', async (_rank, p) => `later ${p}`);
    await expect(ranks[1]!.ask('tool.sum', 41, 1000)).resolves.toBe(42);
    await expect(ranks[0]!.ask('tool.later', 'x', 1000)).resolves.toBe('later x');
  });

  it('holds messages to a rank until it is connected, and to a type until its handler', async () => {
    const { hub, ranks } = pair();
    hub.send('all', 'cr.checkpoint', 1);
    hub.send(1, 'cr.checkpoint', 2);
    const got: unknown[] = [];
    ranks[1]!.on('cr.checkpoint', (p) => void got.push(p));
    await tick();
    expect(got).toEqual([]); // rank 1 not connected yet
    hub.connected(1);
    await tick();
    expect(got).toEqual([1, 2]);
    hub.send(1, 'cr.checkpoint', 3);
    await tick();
    expect(got).toEqual([1, 2, 3]);
    hub.connected(0);
    await tick();
    const late: unknown[] = [];
    ranks[0]!.on('cr.checkpoint', (p) => void late.push(p)); // arrived before: handed over now
    expect(late).toEqual([1]);
  });

  it('times out an ask that gets no answer, naming the type and the time', async () => {
    const { hub, ranks } = pair();
    hub.connected(0);
    hub.on('tool.never', () => new Promise(() => {}));
    await expect(ranks[0]!.ask('tool.never', null, 30)).rejects.toThrow(
      'control.ask("tool.never"): no answer from mpirun within 30 ms',
    );
  });

  it('refuses bad input of the caller with what was expected', () => {
    const { hub, ranks } = pair();
    expect(() => ranks[0]!.send('checkpoint', 1)).toThrow(
      /control.send: type "checkpoint" is not a namespaced name like "cr.checkpoint"/,
    );
    expect(() => ranks[0]!.ask('cr.x', 1, 0)).toThrow(/timeoutMs 0 is not a positive number/);
    expect(() => hub.send(2, 'cr.x', 1)).toThrow(/rank 2 is not a rank of this job of 2/);
    hub.on('cr.x', () => {});
    expect(() => hub.on('cr.x', () => {})).toThrow(/"cr.x" already has a handler at mpirun/);
  });

  it('reports failing rank handlers and malformed messages without throwing', async () => {
    const { hub, ranks, rankReports } = pair();
    hub.connected(0);
    ranks[0]!.on('tool.boom', () => {
      throw new Error('bang');
    });
    ranks[0]!.on('tool.reject', async () => {
      throw new Error('later bang');
    });
    hub.send(0, 'tool.boom');
    hub.send(0, 'tool.reject');
    ranks[0]!.deliver({ type: 7 });
    ranks[0]!.deliver({ type: 'x.y', replyTo: 99, payload: 1 });
    await tick();
    expect(rankReports).toEqual([
      '0: ignored a control message: control message from mpirun: type 7 is not a string',
      '0: ignored an answer to control ask 99 that nobody waits for (timed out?)',
      '0: the handler of control message "tool.boom" failed: bang',
      '0: the handler of control message "tool.reject" failed: later bang',
    ]);
  });

  it('fails pending asks and reports unhandled messages when the rank finalizes', async () => {
    const { hub, ranks, rankReports } = pair();
    hub.connected(0);
    hub.on('tool.wait', () => new Promise(() => {}));
    hub.send(0, 'cr.restart', 1);
    hub.send(0, 'cr.restart', 2);
    const pending = ranks[0]!.ask('tool.wait', null, 10_000);
    await tick();
    ranks[0]!.close();
    await expect(pending).rejects.toThrow('MPI finalized before mpirun answered');
    expect(rankReports).toContain(
      '0: 2 control message(s) "cr.restart" from mpirun had no handler',
    );
    expect(() => ranks[0]!.send('tool.x')).toThrow(/control channel is closed/);
  });

  it('parses the wire forms strictly', () => {
    expect(() => parseControlUp({ rank: 2, type: 'a.b' }, 2)).toThrow(
      /invalid rank 2 \(job size 2\)/,
    );
    expect(() => parseControlUp({ rank: 0, type: 'a.b', ask: 0 }, 2)).toThrow(/ask id 0/);
    expect(() => parseControlDown(null)).toThrow(/is not an object/);
    expect(() => parseControlDown({ type: 'a.b', replyTo: 1, error: 5 })).toThrow(
      /error 5 is not a string/,
    );
    expect(parseControlUp({ rank: 1, type: 'tool.progress', payload: [1] }, 2)).toEqual({
      rank: 1,
      type: 'tool.progress',
      payload: [1],
      ask: undefined,
    });
  });
});
