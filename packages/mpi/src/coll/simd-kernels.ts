import type { FloatArray } from './types';

/**
 * WebAssembly SIMD kernels for SUM, PROD, MAX and MIN over Float32Array and Float64Array: the
 * large reductions of allreduce, reduce and reduce-scatter. V8 runs the plain element loop at
 * ~1.8 ns per float32 (it converts every element to a double and back, one at a time); the
 * 128-bit lanes of wasm, with the operands copied through a small wasm memory in chunks, take
 * ~0.5 ns (`tools/bench`'s allreduce of 4 MiB spends most of its user CPU in the loop).
 *
 * The results are bit for bit the loop's: a float32 sum or product computed in double precision
 * and rounded once to single precision equals the single-precision operation (53 >= 2 x 24 + 2
 * bits), and wasm's min/max, like Math.min/max, give NaN when either operand is NaN and order
 * -0 below +0.
 */

/** The lane operations the module holds: its functions are exported under these names. */
export type SimdOpName = 'add' | 'mul' | 'max' | 'min';

/** Opcodes after the 0xfd SIMD prefix (WebAssembly SIMD proposal, finished 2021). */
const OPCODES: Record<SimdOpName, { f32: number; f64: number }> = {
  add: { f32: 0xe4, f64: 0xf0 },
  mul: { f32: 0xe6, f64: 0xf2 },
  min: { f32: 0xe8, f64: 0xf4 },
  max: { f32: 0xe9, f64: 0xf5 },
};

/** Bytes of one operand's region in the wasm memory: a chunk stays in the first-level cache. */
const CHUNK = 16_384;

/** Below this many elements the plain loop is as fast (the copies and the call cost more). */
export const SIMD_MIN_ELEMENTS = 256;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];
const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];

/**
 * `(func (param $a i32) (param $b i32) (param $bytes i32))`: for i from 0 by 16 below $bytes,
 * v128 at $a + i = op(v128 at $a + i, v128 at $b + i).
 */
function laneLoop(simdOpcode: number): number[] {
  const get = (local: number) => [0x20, local];
  const load = [0xfd, 0x00, 0x04, 0x00]; // v128.load align=16 offset=0
  const code = [
    ...[0x01, 0x01, 0x7f], // one local: $i (i32)
    ...[0x02, 0x40, 0x03, 0x40], // block, loop
    ...get(3),
    ...get(2),
    ...[0x4f, 0x0d, 0x01], // i32.ge_u, br_if 1 (out of the block)
    ...get(0),
    ...get(3),
    0x6a, // $a + $i: where to store
    ...get(0),
    ...get(3),
    0x6a,
    ...load,
    ...get(1),
    ...get(3),
    0x6a,
    ...load,
    ...[0xfd, ...leb(simdOpcode)],
    ...[0xfd, 0x0b, 0x04, 0x00], // v128.store
    ...get(3),
    ...[0x41, 0x10, 0x6a, 0x21, 0x03], // $i += 16
    ...[0x0c, 0x00, 0x0b, 0x0b, 0x0b], // br 0 (loop), end loop, end block, end func
  ];
  return [...leb(code.length), ...code];
}

/** The module's bytes: one memory of 2 pages (no growth: views on it never detach). */
function moduleBytes(): Uint8Array {
  const funcs = Object.entries(OPCODES).flatMap(([op, codes]) => [
    { name: `${op}_f32`, opcode: codes.f32 },
    { name: `${op}_f64`, opcode: codes.f64 },
  ]);
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00]), // (i32, i32, i32) -> ()
    ...section(3, [funcs.length, ...funcs.map(() => 0)]),
    ...section(5, [0x01, 0x01, 0x02, 0x02]), // memory: min 2, max 2 pages
    ...section(7, [
      funcs.length + 1,
      ...name('memory'),
      0x02,
      0x00,
      ...funcs.flatMap((f, i) => [...name(f.name), 0x00, i]),
    ]),
    ...section(10, [funcs.length, ...funcs.flatMap((f) => laneLoop(f.opcode))]),
  ]);
}

type LaneLoop = (a: number, b: number, bytes: number) => void;

/** What this file uses of the WebAssembly API (the project's TypeScript libraries omit it). */
interface WasmInstance {
  exports: Record<string, unknown> & { memory: { buffer: ArrayBuffer } };
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => unknown;
  Instance: new (module: unknown) => WasmInstance;
}

let instance: WasmInstance | null | undefined;

/** The compiled module, or null where this engine has no WebAssembly (SIMD). */
function simdInstance(): WasmInstance | null {
  if (instance !== undefined) return instance;
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  try {
    instance = wasm ? new wasm.Instance(new wasm.Module(moduleBytes())) : null;
  } catch {
    instance = null; // an engine without SIMD refuses the module: the loops serve
  }
  return instance;
}

/** A kernel out[i] = a[i] op b[i] over float arrays of one type (out may be a or b). */
export type FloatKernel = (a: FloatArray, b: FloatArray, out: FloatArray) => void;

function chunkedKernel(
  loop: LaneLoop,
  memory: ArrayBuffer,
  Type: Float32ArrayConstructor | Float64ArrayConstructor,
): FloatKernel {
  const step = CHUNK / Type.BYTES_PER_ELEMENT;
  const left = new Type(memory, 0, step);
  const right = new Type(memory, CHUNK, step);
  return (a, b, out) => {
    const n = out.length;
    for (let lo = 0; lo < n; lo += step) {
      const hi = Math.min(n, lo + step);
      left.set(a.subarray(lo, hi));
      right.set(b.subarray(lo, hi));
      // Whole 16-byte lanes: a tail lane reads stale elements past hi, which are not copied out.
      loop(0, CHUNK, Math.ceil(((hi - lo) * Type.BYTES_PER_ELEMENT) / 16) * 16);
      out.set(hi - lo === step ? left : left.subarray(0, hi - lo), lo);
    }
  };
}

/**
 * The SIMD kernel of `op` for arrays like `out` (exactly Float32Array or Float64Array), or null:
 * another element type, or no WebAssembly SIMD here. Callers use it from `SIMD_MIN_ELEMENTS`.
 */
export function simdKernelFor(op: SimdOpName): (out: unknown) => FloatKernel | null {
  const made = new Map<unknown, FloatKernel | null>();
  const make = (Type: Float32ArrayConstructor | Float64ArrayConstructor, suffix: string) => {
    const wasm = simdInstance();
    if (!wasm) return null;
    const memory = wasm.exports.memory.buffer;
    return chunkedKernel(wasm.exports[`${op}_${suffix}`] as LaneLoop, memory, Type);
  };
  return (out) => {
    const type = (out as object).constructor;
    let kernel = made.get(type);
    if (kernel === undefined) {
      if (type === Float32Array) kernel = make(Float32Array, 'f32');
      else if (type === Float64Array) kernel = make(Float64Array, 'f64');
      else kernel = null;
      made.set(type, kernel);
    }
    return kernel;
  };
}
