import { DataKind } from '../data';
import { basicType } from './datatype';

/**
 * The predefined datatypes: one per typed-array element type, plus BYTE and PACKED (untyped
 * bytes: a receive of BYTE accepts a message of any element type, as `MPI_BYTE` does).
 */
export const BYTE = basicType('BYTE', DataKind.BUFFER);
export const PACKED = basicType('PACKED', DataKind.BUFFER);
export const INT8 = basicType('INT8', DataKind.INT8);
export const UINT8 = basicType('UINT8', DataKind.UINT8);
export const INT16 = basicType('INT16', DataKind.INT16);
export const UINT16 = basicType('UINT16', DataKind.UINT16);
export const INT32 = basicType('INT32', DataKind.INT32);
export const UINT32 = basicType('UINT32', DataKind.UINT32);
export const FLOAT32 = basicType('FLOAT32', DataKind.FLOAT32);
export const FLOAT64 = basicType('FLOAT64', DataKind.FLOAT64);
export const BIGINT64 = basicType('BIGINT64', DataKind.BIGINT64);
export const BIGUINT64 = basicType('BIGUINT64', DataKind.BIGUINT64);

/** The predefined types by name, for the `MPI` namespace. */
export const PREDEFINED_TYPES = {
  BYTE,
  PACKED,
  INT8,
  UINT8,
  INT16,
  UINT16,
  INT32,
  UINT32,
  FLOAT32,
  FLOAT64,
  BIGINT64,
  BIGUINT64,
} as const;
