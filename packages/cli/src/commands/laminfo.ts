import type { SsiContext } from '@ssi/core';
import { isFrameworkType } from '@ssi/core';
import { createCliContext, reportProblems } from '../cli-context';
import { cliVersion } from '../cli-version';
import { moduleInfo, moduleLine, overview } from '../laminfo/list-modules';
import { collectParams, paramLines } from '../laminfo/list-params';
import { UsageError } from '../run-command';
import { unknownSettingLine, unknownSettings } from '../settings-check';

const USAGE = `usage: laminfo [--json] [--ssi name value]...
       laminfo --param <type|all> <module|all>   parameters: default, value and its source
       laminfo --version <type|all> [full]       module versions of one framework
       laminfo --version                         the version of this installation
Lists the SSI frameworks and every module found, with versions and where each came from.`;

interface LaminfoArgs {
  json: boolean;
  param?: [string, string];
  version?: [string, boolean];
}

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv);
  const args = parseArgs(ctx.rest);
  reportProblems(ctx);
  const print = (lines: string[]) => process.stdout.write(lines.map((l) => `${l}\n`).join(''));

  if (args.param) {
    const groups = await collectParams(ctx, ...args.param);
    warnUnknownSettings(ctx);
    if (args.json) print([JSON.stringify(groups, null, 2)]);
    else print(paramLines(groups));
    return 0;
  }
  if (args.version) {
    const [type, full] = args.version;
    const modules = ctx.discovery.modules
      .filter((r) => type === 'all' || r.type === type)
      .map(moduleInfo);
    if (args.json) print([JSON.stringify(modules, null, 2)]);
    else print(modules.map((m) => moduleLine(m, full)));
    return 0;
  }
  if (args.json) {
    const report = {
      cli: cliVersion(),
      paramFile: ctx.params.paramFileInfo(),
      modules: ctx.discovery.modules.map(moduleInfo),
      problems: ctx.discovery.problems,
    };
    print([JSON.stringify(report, null, 2)]);
  } else {
    print(overview(ctx, cliVersion()));
  }
  return 0;
}

/** A `--ssi` name nobody registered is almost always a typo: say so and suggest a fix. */
export function warnUnknownSettings(ctx: SsiContext): void {
  for (const u of unknownSettings(ctx.params)) {
    process.stderr.write(`warning: ${unknownSettingLine(u)}\n`);
  }
}

function parseArgs(rest: string[]): LaminfoArgs {
  const args: LaminfoArgs = { json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--json') args.json = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    else if (arg === '--param' || arg === '-param') {
      const [type, module] = [rest[i + 1], rest[i + 2]];
      if (!type || !module || type.startsWith('-') || module.startsWith('-')) {
        throw new UsageError(`--param needs a type and a module: --param rpi tcp, --param all all`);
      }
      args.param = [type, module];
      i += 2;
    } else if (arg === '--version' || arg === '-version') {
      const type = rest[i + 1];
      if (!type || type.startsWith('-')) {
        throw new UsageError(`--version needs a framework type: --version rpi full`);
      }
      if (type !== 'all' && !isFrameworkType(type)) {
        throw new UsageError(`--version: unknown framework type "${type}"`);
      }
      const full = rest[i + 2] === 'full';
      args.version = [type, full];
      i += full ? 2 : 1;
    } else {
      throw new UsageError(`unknown argument "${arg}"\n${USAGE}`);
    }
  }
  return args;
}
