import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/** What a checkout has that is not the repository's own: dependencies, builds, profiles, git itself. */
const NOT_OURS = new Set(['.git', 'node_modules', 'dist', 'coverage', 'profiles']);
/** Files the .gitignore files leave out, by name (a walk needs no git, so it reads no .gitignore). */
const IGNORED = [/\.tsbuildinfo$/, /\.cpuprofile$/, /\.heapprofile$/, /^playground\/screenshot\.png$/];

/**
 * The repository's files, relative to `root`, sorted: what git knows (tracked, plus new files that are not
 * ignored, so a file is checked before its first commit) when `root` is the top of a git checkout; otherwise —
 * a downloaded archive, a copy — every file under `root` but the folders and files the repository ignores.
 */
export function repoFiles(root: string, temporary: string = tmpdir()): string[] {
  const files = (isCheckout(root) ? gitFiles(root) : walk(root, root)).filter(notIn(scratch(root, temporary)));
  // a file deleted in the working tree but not yet in the index is no longer part of the repository
  return [...new Set(files)].filter((file) => existsSync(join(root, file)) && statSync(join(root, file)).isFile()).sort();
}

/** The system's temporary folder, relative to `root`, when a runner set TMPDIR inside the checkout. */
function scratch(root: string, temporary: string): string | undefined {
  const inside = relative(resolve(root), resolve(temporary));
  return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? undefined : `${inside.split(sep).join('/')}/`;
}

const notIn = (folder: string | undefined) => (file: string) => folder === undefined || !file.startsWith(folder);

function isCheckout(root: string): boolean {
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return resolve(top.trim()) === resolve(root);
  } catch {
    return false; // no git, or not a checkout
  }
}

function gitFiles(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  return out.split('\0').filter((file) => file !== '');
}

function walk(root: string, folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_OURS.has(entry.name)) return [];
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return walk(root, path);
    const file = relative(root, path).split(sep).join('/');
    return entry.isFile() && !IGNORED.some((pattern) => pattern.test(file)) ? [file] : [];
  });
}
