import { ANY_SOURCE, ANY_TAG, UNDEFINED } from './constants';
import type { BufferLike } from './data';
import { DataKind, elementSize, kindName } from './data';
import { Datatype } from './datatype/datatype';
import type { MpiError } from './errors';
import type { RpiRequest } from './rpi/request';

type ElementType = { BYTES_PER_ELEMENT: number } | BufferLike;

/**
 * The status of a completed receive or probe (`MPI_Status`): who sent it, with what tag, how
 * much, and whether the operation was cancelled. Pass one to the object-tier calls to have it
 * filled (`await comm.recv(src, tag, status)`), as in mpi4py.
 */
export class Status {
  /** Rank of the sender in the communicator (`MPI_SOURCE`). */
  source: number = ANY_SOURCE;
  /** Tag of the message (`MPI_TAG`). */
  tag: number = ANY_TAG;
  /** The error of this request in a multiple completion (`MPI_ERROR`), else null. */
  error: MpiError | null = null;
  /** Whether the operation was cancelled (`MPI_Test_cancelled`). */
  cancelled = false;
  /** Length of the message in bytes (LAM's `st_length`). */
  byteLength = 0;
  /** What the sender sent: a `DataKind` (typed array type, Buffer, or msgpackr object). */
  kind: number = DataKind.BUFFER;
  /** Element size of the receive buffer the count is given in; 0 = the sender's element type. */
  elementBytes = 0;

  /**
   * Number of elements received (`MPI_Get_count`): in the receive buffer's element type for a
   * receive into a buffer, else in the sender's element type (1 for an object). `UNDEFINED` when
   * the bytes are not a whole number of elements.
   */
  get count(): number {
    if (this.kind === DataKind.OBJECT && this.elementBytes === 0) return 1;
    return this.getCount(this.elementBytes || elementSize(this.kind));
  }

  /**
   * Count in another element type (`MPI_Get_count`): a Datatype, a typed array constructor, an
   * instance, or bytes per element. `UNDEFINED` when not a whole number of them.
   */
  getCount(type: Datatype | ElementType | number = 1): number {
    if (type instanceof Datatype) {
      if (type.size === 0) return this.byteLength === 0 ? 0 : UNDEFINED;
      return this.byteLength % type.size === 0 ? this.byteLength / type.size : UNDEFINED;
    }
    const size =
      typeof type === 'number'
        ? type
        : 'BYTES_PER_ELEMENT' in type && typeof type.BYTES_PER_ELEMENT === 'number'
          ? type.BYTES_PER_ELEMENT
          : 1;
    if (size <= 0) return UNDEFINED;
    return this.byteLength % size === 0 ? this.byteLength / size : UNDEFINED;
  }

  /**
   * Basic elements received (`MPI_Get_elements`) when receiving with `type`: counts the elements
   * of a partly filled last instance too; `UNDEFINED` when the bytes end inside an element.
   */
  getElements(type: Datatype): number {
    if (type.size === 0) return 0;
    const whole = Math.floor(this.byteLength / type.size);
    const part = type.map.elementsIn(this.byteLength - whole * type.size);
    return part < 0 ? UNDEFINED : whole * type.elements + part;
  }

  /** Name of what was sent: "Float64Array", "Buffer", "object". */
  get kindName(): string {
    return kindName(this.kind);
  }

  /** Resets to the empty status (`MPI_STATUS` of a null request). */
  clear(): this {
    this.source = ANY_SOURCE;
    this.tag = ANY_TAG;
    this.error = null;
    this.cancelled = false;
    this.byteLength = 0;
    this.kind = DataKind.BUFFER;
    this.elementBytes = 0;
    return this;
  }

  /** A copy, for keeping a status that the library will fill again (persistent requests). */
  clone(): Status {
    return Object.assign(new Status(), this);
  }
}

/** The public status of a done request; counts in `elementBytes` (0: the sender's element type). */
export function statusOf(req: RpiRequest, elementBytes: number): Status {
  const st = new Status();
  st.source = req.stSource;
  st.tag = req.stTag;
  st.byteLength = req.stLength;
  st.kind = req.stKind;
  st.cancelled = req.cancelled;
  st.elementBytes = elementBytes;
  st.error = req.error;
  return st;
}
