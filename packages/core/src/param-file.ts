import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SsiError } from './errors';

export interface ParamFile {
  path: string;
  found: boolean;
  values: Map<string, { value: string; where: string }>;
}

type Env = Record<string, string | undefined>;

/** `SSI_PARAM_FILE` if set (then it must exist), else `$HOME/.ssi/params.conf` if present. */
export function defaultParamFilePath(env: Env): { path: string; required: boolean } {
  const explicit = env.SSI_PARAM_FILE;
  if (explicit) return { path: explicit, required: true };
  return { path: join(env.HOME || homedir(), '.ssi', 'params.conf'), required: false };
}

export function loadParamFile(env: Env): ParamFile {
  const { path, required } = defaultParamFilePath(env);
  return readParamFile(path, required);
}

/**
 * Reads `name = value` (or `name value`) lines; `#` starts a comment. A file that exists but
 * cannot be read is an error, so a typo never silently drops the user's settings.
 */
export function readParamFile(path: string, required: boolean): ParamFile {
  const values = new Map<string, { value: string; where: string }>();
  let text: string;
  try {
    if (statSync(path).isDirectory()) {
      throw new SsiError('PARAM_FILE', `parameter file ${path} is a directory, not a file`);
    }
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof SsiError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return { path, found: false, values };
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`;
    throw new SsiError(
      'PARAM_FILE',
      `parameter file ${path} ${why}; fix it or unset SSI_PARAM_FILE`,
    );
  }
  text.split(/\r?\n/).forEach((line, i) => {
    const content = line.replace(/#.*$/, '').trim();
    if (!content) return;
    const m = /^([A-Za-z][A-Za-z0-9_]*)\s*(?:=\s*|\s+)(.*)$/.exec(content);
    if (!m) {
      throw new SsiError(
        'PARAM_FILE',
        `${path}:${i + 1}: cannot parse "${content}"; expected "name = value"`,
      );
    }
    values.set(m[1]!, { value: m[2]!.trim(), where: `${path}:${i + 1}` });
  });
  return { path, found: true, values };
}
