/** Sum of a list of counts. */
export function total(counts: readonly number[]): number {
  let sum = 0;
  for (const c of counts) sum += c;
  return sum;
}
