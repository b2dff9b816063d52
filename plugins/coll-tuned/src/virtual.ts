/**
 * Recursive doubling and halving need a power-of-two number of processes. With n = p + rem
 * (p the largest power of two <= n), the first 2 * rem ranks pair up, (0, 1), (2, 3), ...: the odd
 * one hands its operand to the even one and waits for the result. What remains are p "virtual"
 * ranks, each standing for a contiguous run of real ranks in rank order, so algorithms that
 * combine lower virtual ranks first still combine operands in rank order (non-commutative
 * operators stay correct) and the result is the left fold for n < 4.
 */
export interface Virtual {
  /** The power of two the algorithm runs on. */
  p: number;
  /** How many pairs fold into one virtual rank. */
  rem: number;
  /** This process's virtual rank, or -1 when it handed its operand over (an odd rank < 2 rem). */
  v: number;
}

export function largestPowerOfTwo(n: number): number {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

export function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

export function virtualOf(rank: number, size: number): Virtual {
  const p = largestPowerOfTwo(size);
  const rem = size - p;
  if (rank < 2 * rem) return { p, rem, v: rank % 2 === 0 ? rank / 2 : -1 };
  return { p, rem, v: rank - rem };
}

/** The real rank of virtual rank `v`. */
export function realOf(v: number, rem: number): number {
  return v < rem ? 2 * v : v + rem;
}
