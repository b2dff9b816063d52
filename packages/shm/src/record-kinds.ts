/**
 * What a postbox record carries, in the low byte (`KIND_MASK`) of its meta word: a whole message
 * (the postbox path, `postboxes.ts`), or the descriptor of one chunk of a large message placed in
 * the pool (the pool path, `pool-path.ts`). Both kinds share the postbox of a pair, so a large
 * message keeps its place in the pair's order.
 */
export const KIND_INLINE = 1;
export const KIND_CHUNK = 2;
export const KIND_MASK = 0xff;
/** On a chunk record: the message's first chunk (a receiver starts a buffer for it). */
export const FIRST = 0x100;
/** On a chunk record: the message's last chunk (the message is complete after it). */
export const LAST = 0x200;
