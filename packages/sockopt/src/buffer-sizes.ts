import type net from 'node:net';
import { loadAddon } from './addon';

/** A socket's kernel buffer sizes in bytes, as the kernel reports them (Linux: twice the request). */
export interface BufferSizes {
  sndbuf: number;
  rcvbuf: number;
}

/** Whether socket options can be set here, and if not, why (and what to do). */
export function sockoptAvailable(): { ok: true } | { ok: false; reason: string } {
  const s = loadAddon();
  return s.ok ? { ok: true } : s;
}

/**
 * The file descriptor of a connected TCP socket. Node has no public accessor; its TCP handle
 * carries `fd` on POSIX systems.
 */
export function socketFd(socket: net.Socket): number {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    throw new Error('the socket has no file descriptor (not connected yet, closed, or not TCP)');
  }
  return fd;
}

function addon() {
  const s = loadAddon();
  if (!s.ok) throw new Error(s.reason);
  return s.addon;
}

function checkSize(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) {
    throw new RangeError(`${name} must be a whole number of bytes from 0 to 2147483647, got ${v}`);
  }
  return v;
}

/**
 * Sets SO_SNDBUF and/or SO_RCVBUF (a size of 0 or absent leaves that buffer to the kernel's
 * autotuning) and returns what the kernel reports afterwards. The kernel caps requests at
 * net.core.wmem_max / rmem_max; compare the result with what you asked for.
 */
export function setBufferSizes(socket: net.Socket, sizes: Partial<BufferSizes>): BufferSizes {
  const sndbuf = checkSize('sndbuf', sizes.sndbuf);
  const rcvbuf = checkSize('rcvbuf', sizes.rcvbuf);
  return addon().setBufferSizes(socketFd(socket), sndbuf, rcvbuf);
}

/** The kernel's SO_SNDBUF and SO_RCVBUF of a socket. */
export function getBufferSizes(socket: net.Socket): BufferSizes {
  return addon().getBufferSizes(socketFd(socket));
}
