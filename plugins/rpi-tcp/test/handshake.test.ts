import { describe, expect, it } from 'vitest';
import {
  checkProof,
  checkResponse,
  makeHello,
  makeProof,
  makeResponse,
  parseHello,
  rehearseHandshake,
} from '../src/handshake';

const secret = new Uint8Array(32).fill(7);

describe('tcp handshake', () => {
  it('the rehearsal of MPI.init passes, and leaves every job told apart', () => {
    rehearseHandshake(secret, 'job-a');
    // job-a's hash is cached now: a hello of job-b is still refused, and job-b's own accepted
    const b = makeHello('job-b', 1, 2);
    expect(parseHello(b.bytes, 'job-a')).toBe('the peer belongs to another job');
    expect(parseHello(makeHello('job-a', 1, 2).bytes, 'job-b')).toBe(
      'the peer belongs to another job',
    );
    expect(parseHello(b.bytes, 'job-b')).toMatchObject({ from: 1, to: 2 });
  });

  it('a peer without the secret fails both directions', () => {
    const other = new Uint8Array(32).fill(8);
    const hello = makeHello('job-a', 3, 4);
    const parsed = parseHello(hello.bytes, 'job-a');
    if (typeof parsed === 'string') throw new Error(parsed);
    const forged = makeResponse(other, 'job-a', parsed);
    expect(checkResponse(forged.bytes, secret, 'job-a', hello.nonce, 3, 4)).toBe(
      'the peer does not know the job secret',
    );
    const response = makeResponse(secret, 'job-a', parsed);
    const nonceA = checkResponse(response.bytes, secret, 'job-a', hello.nonce, 3, 4);
    if (typeof nonceA === 'string') throw new Error(nonceA);
    expect(
      checkProof(makeProof(other, 'job-a', nonceA, 3, 4), secret, 'job-a', response.nonce, parsed),
    ).toBe(false);
    expect(
      checkProof(makeProof(secret, 'job-a', nonceA, 3, 4), secret, 'job-a', response.nonce, parsed),
    ).toBe(true);
  });
});
