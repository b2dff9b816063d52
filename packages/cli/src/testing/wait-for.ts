const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` every 50 ms until it returns a value other than undefined or false, and returns
 * that value; fails after `timeoutMs` naming `what` (and what `detail` says then).
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false,
  timeoutMs = 15_000,
  detail: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${detail()}`.trim());
    await sleep(50);
  }
}
