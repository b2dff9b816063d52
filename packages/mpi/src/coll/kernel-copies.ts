import type { NumericArray } from './types';

/** An element loop of a reduction operator: out[i] = a[i] op b[i]. */
export type Kernel<A extends NumericArray> = (a: A, b: A, out: A) => void;

/**
 * A compiled copy of an element kernel per element type. V8 keeps the type feedback of a loop per
 * function: once one kernel has run on five or more kinds of typed array, its element accesses go
 * megamorphic and stay so (0.5 M float32 summed in ~22 ms instead of ~1 ms). Each element type
 * therefore gets its own copy, compiled from the kernel's source with the type's name appended,
 * since V8 shares compiled code (and its feedback) between identical sources.
 *
 * `choose` picks the kernel for an element type; the kernel may use nothing but its arguments and
 * globals (its copy is compiled outside this module).
 */
export function kernelPerElementType<
  A extends NumericArray,
  K extends (...args: never) => unknown = Kernel<A>,
>(choose: (out: A) => K): (out: A) => K {
  const copies = new Map<unknown, K>();
  return (out) => {
    const type = out.constructor;
    let copy = copies.get(type);
    if (copy === undefined) {
      copy = compiledCopy(choose(out), type.name);
      copies.set(type, copy);
    }
    return copy;
  };
}

function compiledCopy<K extends (...args: never) => unknown>(kernel: K, typeName: string): K {
  return new Function(`return ${kernel.toString()} // for ${typeName}`)() as K;
}
