import { describe, expect, it } from 'vitest';
import { SyncPoll } from '../src/progress/sync-poll';
import type { RpiActions } from '../src/rpi/types';

/** An rpi whose `advance` records its calls and answers from `answers` (then `rest`). */
function fakeRpi(polling: boolean, answers: boolean[], rest = false, pollWait?: 'spin' | 'event') {
  const calls: boolean[] = [];
  const actions = {
    polling,
    pollWait,
    advance(block: boolean) {
      calls.push(block);
      return answers.length > 0 ? answers.shift()! : rest;
    },
  } as unknown as RpiActions;
  return { poll: new SyncPoll(() => actions), calls };
}

describe('SyncPoll', () => {
  it('never calls advance for an event-driven module', () => {
    const { poll, calls } = fakeRpi(false, [true]);
    expect(poll.spinUntil(() => false)).toBe(false);
    expect(poll.spinUntil(() => true)).toBe(true);
    expect(poll.pollNow()).toBe(false);
    expect(poll.enabled).toBe(false);
    expect(poll.keepsPolling).toBe(false);
    expect(calls).toEqual([]);
  });

  it('spins in advance(true) until what it waits for is done', () => {
    const { poll, calls } = fakeRpi(true, [true, true, true], false);
    // done after the third call moved something
    expect(poll.spinUntil(() => calls.length >= 3)).toBe(true);
    expect(calls).toEqual([true, true, true]);
  });

  it('gives up when a spin of the module found nothing', () => {
    const { poll, calls } = fakeRpi(true, [true, false], true);
    expect(poll.spinUntil(() => false)).toBe(false);
    expect(calls).toEqual([true, true]);
  });

  it('gives up after continuous progress that never finishes the wait (the event loop must run)', () => {
    const { poll, calls } = fakeRpi(true, [], true);
    expect(poll.spinUntil(() => false)).toBe(false);
    expect(calls.length).toBeGreaterThan(1);
  });

  it('tests poll once without spinning; pollWait says whether to keep polling', () => {
    const { poll, calls } = fakeRpi(true, [true]);
    expect(poll.pollNow()).toBe(true);
    expect(calls).toEqual([false]);
    expect(poll.keepsPolling).toBe(true);
    expect(fakeRpi(true, [], false, 'event').poll.keepsPolling).toBe(false);
  });
});
