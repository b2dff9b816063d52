/**
 * `p`, or the error `expired()` makes if `p` has not settled within `ms` milliseconds: every wait
 * on other processes (of the run-time environment, the MPI layer, tests) is bounded and fails
 * loudly, naming what it waited for. The timer is cleared as soon as `p` settles.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(expired()), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
