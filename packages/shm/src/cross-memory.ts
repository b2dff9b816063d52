import { ShmError } from './errors';
import { native } from './native';

/**
 * Cross-memory attach (Linux `process_vm_readv`): a process copies bytes straight out of another
 * process's memory, one copy and no shared segment in between, as Open MPI's vader transport
 * does for large messages. The sending process publishes where its buffer lives (`addressOf`),
 * the receiving one copies it into its own buffer (`readFrom`). Whether the kernel allows it
 * between two given processes (same user, ptrace access: no Yama restriction, no seccomp filter)
 * shows only when it is tried: callers keep another way of moving the bytes.
 */
export interface CrossMemory {
  /** The address of the first byte of `view` in this process (stable: buffers never move). */
  addressOf(view: ArrayBufferView): number;
  /**
   * Copies `into.byteLength` bytes at `address` of process `pid` into `into`. Throws a ShmError
   * `CROSS_MEMORY` naming the errno (`EPERM`: not allowed, `ESRCH`: no such process, `EFAULT`:
   * not mapped there).
   */
  readFrom(pid: number, address: number, into: ArrayBufferView): void;
  /** Copies `from` to `address` of process `pid` (the other direction; same errors). */
  writeTo(pid: number, address: number, from: ArrayBufferView): void;
}

interface CrossMemoryAddon {
  addressOf?(view: ArrayBufferView): number;
  readFrom?(pid: number, address: number, into: ArrayBufferView): number;
  writeTo?(pid: number, address: number, from: ArrayBufferView): number;
}

let probed: { cm: CrossMemory | null; reason: string | null } | undefined;

/**
 * Cross-memory attach if this process can use it: the addon has it and a read of this process's
 * own memory through the system call works (it fails where seccomp or the kernel forbid it).
 * Null otherwise; `crossMemoryUnavailableReason()` says why.
 */
export function crossMemory(): CrossMemory | null {
  return probe().cm;
}

/** Why `crossMemory()` is null, or null when it is available. */
export function crossMemoryUnavailableReason(): string | null {
  return probe().reason;
}

function probe(): { cm: CrossMemory | null; reason: string | null } {
  if (probed) return probed;
  try {
    const addon = native() as unknown as CrossMemoryAddon;
    const { addressOf, readFrom, writeTo } = addon;
    if (addressOf === undefined || readFrom === undefined || writeTo === undefined) {
      probed = { cm: null, reason: 'the @ssi/shm addon was built without cross-memory attach' };
      return probed;
    }
    const cm: CrossMemory = {
      addressOf: (view) => addressOf(view),
      readFrom: (pid, address, into) => crossCopy(readFrom, pid, address, into),
      writeTo: (pid, address, from) => crossCopy(writeTo, pid, address, from),
    };
    const from = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
    const into = new Uint8Array(8);
    cm.readFrom(process.pid, cm.addressOf(from), into);
    if (into[7] !== 8) throw new Error('a read of this process came back wrong');
    cm.writeTo(process.pid, cm.addressOf(into), new Uint8Array(8));
    if ((into[7] as number) !== 0) throw new Error('a write to this process did not arrive');
    probed = { cm, reason: null };
  } catch (err) {
    probed = {
      cm: null,
      reason: `process_vm_readv/writev do not work here: ${(err as Error).message}`,
    };
  }
  return probed;
}

/** One system call of the addon, its errno turned into a ShmError `CROSS_MEMORY`. */
function crossCopy(
  call: (pid: number, address: number, view: ArrayBufferView) => number,
  pid: number,
  address: number,
  view: ArrayBufferView,
): void {
  try {
    call(pid, address, view);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    throw new ShmError('CROSS_MEMORY', `${e.code ?? 'EUNKNOWN'}: ${e.message ?? String(err)}`);
  }
}
