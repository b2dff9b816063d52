import type { WireMessage } from '../wire/wire';
import { encodeFrame } from '../wire/wire';

/**
 * OOB messages for local processes that have not attached yet (an MPI process may be sent its
 * peers' GPS before it has connected). Delivered in arrival order when the process attaches.
 */
export class Mailboxes {
  private readonly boxes = new Map<number, { messages: WireMessage[]; bytes: number }>();

  constructor(private readonly limitBytes: number) {}

  /** False when the box is full: the sender is told, nothing is dropped silently. */
  put(proc: number, message: WireMessage): boolean {
    const size = encodeFrame(message).length;
    const box = this.boxes.get(proc) ?? { messages: [], bytes: 0 };
    if (box.bytes + size > this.limitBytes) return false;
    box.messages.push(message);
    box.bytes += size;
    this.boxes.set(proc, box);
    return true;
  }

  take(proc: number): WireMessage[] {
    const box = this.boxes.get(proc);
    this.boxes.delete(proc);
    return box?.messages ?? [];
  }

  clear(): number {
    let n = 0;
    for (const box of this.boxes.values()) n += box.messages.length;
    this.boxes.clear();
    return n;
  }
}
