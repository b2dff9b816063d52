import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LamError } from '../errors';

export const SECRET_BYTES = 32;

/** A new universe secret: created once by lamboot, never on a command line. */
export function createSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

export function secretToText(secret: Buffer): string {
  return secret.toString('hex');
}

export function secretFromText(text: string, where: string): Buffer {
  const t = text.trim();
  if (!/^[0-9a-f]+$/.test(t) || t.length !== SECRET_BYTES * 2) {
    throw new LamError('BAD_CONFIG', `${where} does not hold a universe secret`);
  }
  return Buffer.from(t, 'hex');
}

/** The secret file is 0600 inside the 0700 session directory. */
export function writeSecret(sessionDir: string, secret: Buffer): void {
  writeFileSync(join(sessionDir, 'secret'), `${secretToText(secret)}\n`, { mode: 0o600 });
}

export function readSecret(sessionDir: string): Buffer {
  const file = join(sessionDir, 'secret');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new LamError(
      'NO_UNIVERSE',
      `no universe secret in ${sessionDir} (is a lamd running there? run lamboot first)`,
    );
  }
  return secretFromText(text, file);
}
