'use strict';
// The baseline: the library as it was at a git ref (default: v3, version 3 as released), built from git into
// the system's temp folder, so that one run measures old and new side by side.
//
// run.js calls `build(ref)` once (cached by commit) and hands the result to every workload process in
// the environment variable BENCH_BASELINE (JSON: name, label, ref, commit, entry); `fromEnv()` reads it
// there. The build is the ref's own `npm run build`, with a `node_modules` link to the root's: the
// root's TypeScript compiles it, and at run time its require('rxjs') reaches the root's rxjs, the one
// instance the bench holds (Node resolves the link to the real path).
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const DEFAULT_REF = 'v3';
// The versions as they landed, by commit: a checkout made without tags (a clone of a bundle, an archive
// of the history) still finds them; a tag of the same name must be the same commit (build() checks).
// v3 is main as version 3 was released, before version 4's work; its package.json still says 0.1.0.
const RELEASES = {
  v1: 'bd6298610dd5551be163bc99e969c78bf281a3cb',
  v2: 'fae1fcad43cdfa5b30b376bbe8a27d416c8597b5',
  v3: '263c2dd328ee1c85b0fa89ec0dd892e91da9e152',
};
const STAMP = '.bench-baseline.json';

/** The ref asked for: --baseline=REF, else RX_TOOL_LOOP_BASELINE, else v3; undefined for `none`. */
function refFrom(args, env = process.env) {
  const flag = args.find((arg) => arg.startsWith('--baseline='))?.slice('--baseline='.length);
  const ref = flag || env.RX_TOOL_LOOP_BASELINE || DEFAULT_REF;
  return ref === 'none' ? undefined : ref;
}

function run(command, args, options = {}) {
  const out = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options });
  if (out.error) throw new Error(`${command} ${args.join(' ')}: ${out.error.message}`);
  if (out.status !== 0) {
    const said = `${out.stderr ?? ''}\n${out.stdout ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${command} ${args.join(' ')} ended with code ${out.status}${said ? `:\n${said}` : ''}`);
  }
  return out.stdout;
}

const git = (...args) => run('git', ['-C', ROOT, ...args]).trim();

/**
 * Builds the library at `ref` (or finds the build of the same commit made before) and returns the
 * contender's description. Throws with a readable message when the ref is unknown or does not build.
 */
function build(ref) {
  let commit;
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${Object.hasOwn(RELEASES, ref) ? RELEASES[ref] : ref}^{commit}`);
  } catch {
    throw new Error(`no commit or tag named "${ref}" in this repository (a shallow clone without tags? \`git fetch --tags\`)`);
  }
  if (Object.hasOwn(RELEASES, ref)) {
    // a tag that says otherwise would make the label lie: refuse rather than guess which one was meant
    let tagged;
    try {
      tagged = git('rev-parse', '--verify', '--quiet', `refs/tags/${ref}^{commit}`);
    } catch {
      tagged = undefined; // no such tag: the commit alone names the release
    }
    if (tagged && tagged !== commit) throw new Error(`the tag ${ref} is ${tagged.slice(0, 7)}, but ${ref} as released is ${commit.slice(0, 7)} (bench/lib/baseline.js): pass the commit you mean`);
  }
  const short = git('rev-parse', '--short', commit);
  const named = !commit.startsWith(ref);
  const base = {
    name: `rx-tool-loop@${ref}`,
    label: named ? `rx-tool-loop ${ref} (${short})` : `rx-tool-loop ${short}`,
    ref,
    commit,
    short,
  };
  // one folder per commit and per checkout: its node_modules link points at this checkout's root
  const rootKey = crypto.createHash('sha1').update(fs.realpathSync(ROOT)).digest('hex').slice(0, 8);
  const dir = path.join(os.tmpdir(), 'rx-tool-loop-bench', `${commit}-${rootKey}`);
  const stamp = path.join(dir, STAMP);
  if (fs.existsSync(stamp)) {
    const entry = path.join(dir, JSON.parse(fs.readFileSync(stamp, 'utf8')).entry);
    if (fs.existsSync(entry)) return { ...base, entry, cached: true };
  }
  // build next to the final folder and rename it at the end: a build stopped half-way is never reused
  const work = `${dir}.tmp-${process.pid}`;
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  try {
    const tar = spawnSync('git', ['-C', ROOT, 'archive', '--format=tar', commit], { maxBuffer: 1024 * 1024 * 1024 });
    if (tar.status !== 0) throw new Error(`git archive ${short} failed: ${String(tar.stderr).trim()}`);
    run('tar', ['-x', '-C', work], { input: tar.stdout });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'junction');
    run('npm', ['run', '--silent', 'build'], { cwd: work, shell: process.platform === 'win32' });
    const entry = path.relative(work, require.resolve(work)); // the ref's package.json "main"
    fs.writeFileSync(path.join(work, STAMP), `${JSON.stringify({ ref, commit, entry }, null, 2)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(work, dir);
    return { ...base, entry: path.join(dir, entry), cached: false };
  } catch (error) {
    fs.rmSync(work, { recursive: true, force: true });
    throw new Error(`${base.label} did not build: ${error.message}`);
  }
}

/** The baseline run.js handed to this workload process, if any. */
function fromEnv() {
  const json = process.env.BENCH_BASELINE;
  return json ? JSON.parse(json) : undefined;
}

module.exports = { DEFAULT_REF, refFrom, build, fromEnv };
