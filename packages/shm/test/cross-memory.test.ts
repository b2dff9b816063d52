import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { crossMemory, crossMemoryUnavailableReason, isShmError } from '../src/index';
import { killAll, startFixture, waitLine } from './helpers';

afterEach(() => killAll());

/** 3 MiB + 5 bytes: more than one page, not a multiple of anything. */
const SIZE = 3 * 1024 * 1024 + 5;

describe('cross-memory attach between two processes', () => {
  it('is available here (the probe read this process)', () => {
    expect(crossMemoryUnavailableReason()).toBeNull();
    expect(crossMemory()).not.toBeNull();
  });

  it("reads another process's buffer and writes into another one of it, every byte", async () => {
    const cm = crossMemory()!;
    const peer = startFixture('cross-holder', { size: SIZE });
    const addr = JSON.parse(await waitLine(peer, 'ADDR', 20_000, 'the holder')) as {
      src: number;
      dst: number;
    };
    const pid = peer.child.pid!;
    const into = new Uint8Array(SIZE);
    cm.readFrom(pid, addr.src, into);
    let bad = -1;
    for (let i = 0; i < SIZE && bad < 0; i++) if (into[i] !== ((i * 13 + 5) & 0xff)) bad = i;
    expect(bad).toBe(-1);
    // a read from an offset inside the buffer, into the middle of ours
    const part = new Uint8Array(100);
    cm.readFrom(pid, addr.src + 1000, part);
    expect(part[0]).toBe((1000 * 13 + 5) & 0xff);
    const from = new Uint8Array(SIZE);
    for (let i = 0; i < SIZE; i++) from[i] = (i * 7 + 3) & 0xff;
    cm.writeTo(pid, addr.dst, from);
    expect(await waitLine(peer, 'WRITTEN', 20_000, 'the holder checking the write')).toBe('ok');
  });

  it('names the errno: an unmapped address (EFAULT), a process that is gone (ESRCH)', () => {
    const cm = crossMemory()!;
    const into = new Uint8Array(16);
    const fault = (() => {
      try {
        cm.readFrom(process.pid, 8, into); // page 0 is never mapped
      } catch (err) {
        return err;
      }
    })();
    expect(isShmError(fault, 'CROSS_MEMORY')).toBe(true);
    expect((fault as Error).message).toMatch(/EFAULT/);
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!; // exited and reaped
    expect(() => cm.writeTo(gone, 4096, into)).toThrow(/ESRCH|no such process/i);
  });

  it('refuses bad arguments with what it expects', () => {
    const cm = crossMemory()!;
    const bad = cm as unknown as { readFrom(pid: unknown, a: unknown, v: unknown): void };
    expect(() => bad.readFrom(0, 4096, new Uint8Array(1))).toThrow(/pid > 0/);
    expect(() => bad.readFrom(process.pid, 4096, 'nope')).toThrow(/typed array/);
  });
});
