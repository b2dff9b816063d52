import { LamError } from './errors';

/** Reads all of stdin (hboot's and the lamd's configuration), bounded in size and time. */
export function readStdin(timeoutMs: number, maxBytes = 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      finish(new LamError('TIMEOUT', `no configuration on stdin within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (err?: Error) => {
      clearTimeout(timer);
      process.stdin.off('data', onData);
      process.stdin.off('end', onEnd);
      process.stdin.pause();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(new LamError('BAD_CONFIG', `stdin exceeds ${maxBytes} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    process.stdin.on('data', onData);
    process.stdin.on('end', onEnd);
  });
}
