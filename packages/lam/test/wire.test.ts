import { randomBytes } from 'node:crypto';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import {
  CHALLENGE_BYTES,
  checkProof,
  checkServerProof,
  decodePayload,
  encodeFrame,
  FrameDecoder,
  makeChallenge,
  makeProof,
  makeServerProof,
  PROOF_BYTES,
  readChallenge,
  type WireMessage,
} from '../src/wire/wire';

const packr = new Packr({ useRecords: false });
const frame = (value: unknown) => {
  const payload = packr.pack(value);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(payload.length);
  return Buffer.concat([head, payload]);
};

const ping: WireMessage = {
  t: 'req',
  id: 1,
  src: { node: 0, proc: 7 },
  node: 2,
  op: 'ping',
  args: null,
};

describe('handshake', () => {
  const secret = randomBytes(32);

  it('lets a client that knows the secret in, and lets it check the server', () => {
    const { bytes, nonce } = makeChallenge();
    expect(bytes.length).toBe(CHALLENGE_BYTES);
    const nonceS = readChallenge(bytes)!;
    const proof = makeProof(secret, nonceS);
    expect(proof.bytes.length).toBe(PROOF_BYTES);
    const nonceC = checkProof(secret, nonce, proof.bytes);
    expect(nonceC?.equals(proof.nonceC)).toBe(true);
    expect(
      checkServerProof(secret, nonceS, proof.nonceC, makeServerProof(secret, nonce, nonceC!)),
    ).toBe(true);
  });

  it('refuses a wrong secret, a replayed proof and a reflected client proof', () => {
    const { nonce } = makeChallenge();
    const wrong = makeProof(randomBytes(32), nonce);
    expect(checkProof(secret, nonce, wrong.bytes)).toBeUndefined();
    const old = makeProof(secret, makeChallenge().nonce);
    expect(checkProof(secret, nonce, old.bytes)).toBeUndefined();
    const proof = makeProof(secret, nonce);
    // the client's own MAC sent back must not pass as the server's proof
    expect(checkServerProof(secret, nonce, proof.nonceC, proof.bytes.subarray(36))).toBe(false);
  });

  it('rejects greetings that are not ours', () => {
    expect(readChallenge(Buffer.from('SSH-2.0-OpenSSH_9.2p1 Debian\r\n000000'))).toBeUndefined();
    expect(checkProof(secret, makeChallenge().nonce, Buffer.alloc(PROOF_BYTES))).toBeUndefined();
  });
});

describe('frames', () => {
  it('round-trips messages, including raw bytes, split at every byte', () => {
    const oob: WireMessage = {
      t: 'oob',
      id: 9,
      src: { node: 0, proc: 1 },
      dst: { node: 1, proc: 2 },
      tag: -5,
      data: { buf: Buffer.from([1, 2, 3]), text: 'héllo', list: [1, 2.5, null] },
    };
    const bytes = Buffer.concat([encodeFrame(ping), encodeFrame(oob)]);
    const decoder = new FrameDecoder();
    const got: WireMessage[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const r = decoder.push(bytes.subarray(i, i + 1));
      expect(r.error).toBeUndefined();
      got.push(...r.messages);
    }
    expect(got).toEqual([ping, oob]);
    expect(decoder.pending).toBe(0);
  });

  it('refuses to encode a message over the maximum frame size', () => {
    const big: WireMessage = { ...ping, args: Buffer.alloc(2000) };
    expect(() => encodeFrame(big, 1000)).toThrow(/exceeds the maximum frame size of 1000 bytes/);
  });

  it.each([
    ['zero length', Buffer.from([0, 0, 0, 0])],
    ['a length over the maximum', Buffer.from([0xff, 0xff, 0xff, 0xff, 1])],
    ['undecodable msgpack', Buffer.from([0, 0, 0, 2, 0xc1, 0xc1])],
    ['a truncated msgpack value', Buffer.from([0, 0, 0, 3, 0xdc, 0xff, 0xff])],
    [
      'trailing bytes inside the frame',
      Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.from([0xc0, 0xc0])]),
    ],
    ['a value that is not a map', frame([1, 2, 3])],
    ['an unknown message type', frame({ t: 'launch-missiles' })],
    ['a message missing fields', frame({ t: 'req', id: 1 })],
    ['a wrongly typed field', frame({ ...ping, node: 'two' })],
    ['a negative id', frame({ ...ping, id: -1 })],
    [
      'a proc above the range a client may ask for',
      frame({ t: 'hello', proc: 2 ** 23, pid: 1, name: 'x' }),
    ],
    ['a bigint where a number belongs', frame({ ...ping, id: 2n ** 60n })],
    ['a universe without its own node', frame({ t: 'universe-init', nodes: [], me: 0 })],
    [
      'a universe entry with a bad address',
      frame({
        t: 'universe-init',
        me: 0,
        nodes: [
          {
            id: 0,
            name: 'a',
            address: '999.1.1.1',
            port: 1,
            cpus: 1,
            origin: true,
            schedulable: true,
            pid: 1,
          },
        ],
      }),
    ],
  ])('reports %s as an error instead of throwing', (_what, bytes) => {
    const decoder = new FrameDecoder(1024);
    const r = decoder.push(bytes);
    expect(r.error).toBeTruthy();
    expect(r.messages).toEqual([]);
    // and stays failed: nothing more is parsed from that stream
    expect(decoder.push(encodeFrame(ping)).messages).toEqual([]);
  });

  it('does not let a __proto__ key reach the prototype', () => {
    const evil = Buffer.concat([
      Buffer.from([0x83, 0xa1, 0x74, 0xa3]),
      Buffer.from('ack'),
      Buffer.from([0xa9]),
      Buffer.from('__proto__'),
      Buffer.from([0x81, 0xa6]),
      Buffer.from('polled'),
      Buffer.from([0xc3, 0xa1, 0x78, 0x01]),
    ]);
    const m = decodePayload(evil);
    expect(typeof m).toBe('object');
    expect(({} as Record<string, unknown>).polled).toBeUndefined();
  });

  it('survives a fuzz of random and mutated frames without throwing', () => {
    const valid = encodeFrame({ ...ping, args: { argv: ['x'], env: { A: 'b' } } });
    let errors = 0;
    for (let i = 0; i < 5000; i++) {
      const decoder = new FrameDecoder(4096);
      let bytes: Buffer;
      if (i % 3 === 0) bytes = randomBytes(1 + (i % 300));
      else {
        bytes = Buffer.from(valid);
        for (let k = 0; k < 1 + (i % 5); k++)
          bytes[4 + ((i * 7 + k * 13) % (bytes.length - 4))] = i & 0xff;
        if (i % 3 === 2) bytes = bytes.subarray(0, 4 + (i % (bytes.length - 4)));
      }
      const r = decoder.push(bytes);
      if (r.error) errors++;
      for (const m of r.messages) expect(typeof m.t).toBe('string');
    }
    expect(errors).toBeGreaterThan(1000);
  });
});
