import { ANY_TAG } from '@ssi/mpi';
import { describe, expect, it } from 'vitest';
import { PeerCredits } from '../src/credits';

const ask = 'the request to send';

describe('PeerCredits: when a long message may skip the request to send', () => {
  it('a credit matches its context, its tag (ANY_TAG: tags >= 0 only) and fits the message', () => {
    const c = new PeerCredits<string>();
    c.hold(7, 0, 5, 200_000, 0);
    expect(c.takeFor(1, 5, 100_000, ask)).toBe(0); // another context
    c.hold(7, 0, 5, 200_000, 1);
    expect(c.takeFor(0, 6, 100_000, ask)).toBe(0); // another tag
    c.hold(7, 0, 5, 200_000, 2);
    expect(c.takeFor(0, 5, 300_000, ask)).toBe(0); // longer than the receive
    c.hold(7, 0, 5, 200_000, 3);
    expect(c.takeFor(0, 5, 200_000, ask)).toBe(7);
    c.hold(8, 0, ANY_TAG, 200_000, 4);
    expect(c.takeFor(0, -3, 1000, ask)).toBe(0); // internal (negative) tags do not match ANY_TAG
    c.hold(9, 0, ANY_TAG, 200_000, 5);
    expect(c.takeFor(0, 42, 1000, ask)).toBe(9);
  });

  it('a credit is void once a message of ours may have matched its receive', () => {
    const c = new PeerCredits<string>();
    c.noteSent(); // a message on its way when the receiver posted (it had seen 0)
    c.hold(1, 0, 5, 1000, 0);
    expect(c.takeFor(0, 5, 1000, ask)).toBe(0);
    // two credits granted after the receiver saw both messages: the first send uses one and
    // voids the other (its receive might be the one that message matches)
    c.hold(2, 0, 5, 1000, 2);
    c.hold(3, 0, 6, 1000, 2);
    expect(c.takeFor(0, 6, 1000, ask)).toBe(3);
    expect(c.takeFor(0, 5, 1000, ask)).toBe(0);
    // an eager message voids them too
    c.hold(4, 0, 5, 1000, 4);
    c.noteSent();
    expect(c.takeFor(0, 5, 1000, ask)).toBe(0);
  });

  it('a withdrawn credit is gone; the counts wrap at 2^32 like the wire fields', () => {
    const c = new PeerCredits<string>();
    c.hold(1, 0, 5, 1000, 0);
    c.withdraw(1);
    expect(c.takeFor(0, 5, 1000, ask)).toBe(0);
    c.sent = 0xffffffff;
    c.noteSent();
    expect(c.sent).toBe(0);
    c.received = 0xffffffff;
    c.countReceived();
    expect(c.received).toBe(0);
  });

  it('credit ids are never 0 (0 means none on the wire); settling never goes below 0', () => {
    const c = new PeerCredits<string>();
    expect(c.grant()).toBe(1);
    expect(c.granted).toBe(1);
    c.clear();
    c.settle();
    expect(c.granted).toBe(0);
  });

  it('a credit that crossed our last request to send, and fits it, lets that body go', () => {
    const c = new PeerCredits<string>();
    expect(c.takeFor(0, 5, 100_000, 'first')).toBe(0); // asks: message 0
    expect(c.hold(1, 0, 6, 200_000, 0)).toBeNull(); // another tag
    expect(c.hold(2, 0, 5, 50_000, 0)).toBeNull(); // too small
    expect(c.hold(3, 1, 5, 200_000, 0)).toBeNull(); // another context
    expect(c.hold(4, 0, ANY_TAG, 200_000, 0)).toBe('first');
    expect(c.hold(5, 0, 5, 200_000, 0)).toBeNull(); // one body per request
    // a credit granted after the receiver saw the request is kept for the next message instead
    expect(c.hold(6, 0, 5, 200_000, 1)).toBeNull();
    expect(c.takeFor(0, 5, 100_000, 'second')).toBe(6);
  });

  it('only the last message can be crossed, and only if it asked', () => {
    const c = new PeerCredits<string>();
    c.takeFor(0, 5, 100_000, 'asked');
    c.noteSent(); // an eager message after the request: the credit may be for either
    expect(c.hold(1, 0, 5, 200_000, 0)).toBeNull();
    expect(c.hold(2, 0, 5, 200_000, 1)).toBeNull();
    c.noteSent(); // message 2, eager
    expect(c.hold(3, 0, 5, 200_000, 2)).toBeNull(); // crossed an eager message: nothing to send
    c.takeFor(0, 5, 100_000, 'again'); // message 3 asks
    c.clear(); // the connection is gone
    expect(c.hold(4, 0, 5, 200_000, 3)).toBeNull();
  });

  it('a reconnect forgets the credits held and the pending request, keeping the counts', () => {
    const c = new PeerCredits<string>();
    c.countReceived();
    expect(c.hold(1, 0, 5, 200_000, 0)).toBeNull(); // held
    c.forgetHeld();
    expect([c.sent, c.received]).toEqual([0, 1]);
    expect(c.takeFor(0, 5, 100_000, 'asks')).toBe(0); // no credit left: it asks
    c.forgetHeld();
    expect(c.hold(2, 0, 5, 200_000, 0)).toBeNull(); // the request it crossed is forgotten too
    expect(c.sent).toBe(1);
  });
});
