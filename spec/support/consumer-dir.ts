import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The first folder at or above `dir` that holds a `node_modules`, or null. */
export function nodeModulesAbove(dir: string): string | null {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules'))) return at;
    if (dirname(at) === at) return null;
  }
}

/**
 * A new empty folder for a consumer project that sees only the packages installed into it. Node looks for a
 * package in every `node_modules` above the importing file, so a consumer made under a TMPDIR inside this
 * checkout (as a CI runner may set it) would find the repository's own dev dependencies, and a spec that an
 * optional peer is missing would pass for the wrong reason or fail. The system's temporary folders are tried
 * after `os.tmpdir()`; NODE_PATH, the other way around the check, is refused.
 */
export function consumerDir(prefix: string, tried: readonly string[] = [tmpdir(), '/tmp', '/var/tmp']): string {
  if (process.env.NODE_PATH) throw new Error(`NODE_PATH is set (${process.env.NODE_PATH}): a consumer project would see packages it did not install; unset it to run this spec`);
  const bases = tried.filter((base, index, all) => all.indexOf(base) === index && existsSync(base));
  const base = bases.find((candidate) => nodeModulesAbove(candidate) === null);
  if (base === undefined) {
    const seen = bases.map((candidate) => `${candidate} (node_modules in ${nodeModulesAbove(candidate)})`).join(', ');
    throw new Error(`no temporary folder without a node_modules above it for a consumer project: ${seen}`);
  }
  return mkdtempSync(join(base, prefix));
}
