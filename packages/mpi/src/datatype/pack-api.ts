import { type BufferLike, bytesOf } from '../data';
import { ErrorClass, MpiError } from '../errors';
import { Datatype } from './datatype';
import { packInto, unpackFrom } from './pack';
import { partsOf, type TypedMessage } from './typed-message';

/**
 * `MPI_Pack`, `MPI_Unpack`, `MPI_Pack_size`. The packed form is the form on the wire: bytes
 * packed here can be sent as a Uint8Array (or `[bytes, MPI.PACKED, n]`) and received with a
 * datatype, and the other way round.
 */

/** Bytes `count` instances of `type` take packed (`MPI_Pack_size`). */
export function packSize(count: number, type: Datatype): number {
  if (!(type instanceof Datatype)) {
    throw new MpiError(ErrorClass.ERR_TYPE, 'packSize: give a Datatype (MPI.FLOAT64, ...)');
  }
  if (!Number.isInteger(count) || count < 0) {
    throw new MpiError(ErrorClass.ERR_COUNT, `packSize: count = ${String(count)} is not >= 0`);
  }
  type.checkLive('packSize');
  return count * type.size;
}

/**
 * Packs `[buffer, datatype, count]` into `out` at byte `position`; returns the position after it
 * (`MPI_Pack`). ERR_TRUNCATE when `out` has no room for it.
 */
export function pack(data: TypedMessage, out: BufferLike, position: number): number {
  const { buf, type, count } = partsOf(data, 'pack');
  const bytes = checkPosition(out, position, 'pack');
  const n = count * type.size;
  if (position + n > bytes.byteLength) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `pack: ${count} × ${type.name} needs ${n} bytes at position ${position}, but the output ` +
        `buffer has ${bytes.byteLength} bytes; size it with packSize`,
    );
  }
  return packInto(buf, type, count, bytes, position);
}

/**
 * Unpacks from `from` at byte `position` into `[buffer, datatype, count]`; returns the position
 * after what was read (`MPI_Unpack`). ERR_TRUNCATE when `from` ends before `count` instances.
 */
export function unpack(from: BufferLike, position: number, into: TypedMessage): number {
  const { buf, type, count } = partsOf(into, 'unpack');
  const bytes = checkPosition(from, position, 'unpack');
  const n = count * type.size;
  if (position + n > bytes.byteLength) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `unpack: ${count} × ${type.name} needs ${n} bytes at position ${position}, but the input ` +
        `has ${bytes.byteLength} bytes`,
    );
  }
  return unpackFrom(bytes, position, n, buf, type, count);
}

function checkPosition(b: BufferLike, position: number, call: string): Uint8Array {
  if (!(typeof b === 'object' && b !== null && ArrayBuffer.isView(b))) {
    throw new MpiError(ErrorClass.ERR_BUFFER, `${call}: the packed buffer must be a typed array`);
  }
  if (!Number.isInteger(position) || position < 0 || position > b.byteLength) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `${call}: position ${String(position)} is not within 0-${b.byteLength}`,
    );
  }
  return bytesOf(b);
}
