import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * D6: the Restate SDKs the durable-conversation specs run on, both installed as dev dependencies: the oldest
 * the peer range admits, under its own name (what `src/restate` imports), and the newest 1.x under the npm alias
 * `restate-sdk-newest`, which the endpoint's bundle puts in its place (esbuild's `alias`). SDK 1.14 and later need
 * Node 22 (`Promise.withResolvers`): their endpoint runs on the binary of the npm package `node`, installed
 * in ./node22 by the root's `prepare` (a project of its own: as a dependency of the root, its `node` command
 * would be linked into node_modules/.bin, and every npm script and npx would run on Node 22); jest itself runs
 * on the Node that started it.
 */
export interface Sdk {
  label: 'oldest' | 'newest';
  /** The package the endpoint's bundle takes `@restatedev/restate-sdk` from. */
  module: string;
  /** Its version, as installed. */
  version: string;
  /** The Node binary the endpoint runs on. */
  node: string;
}

const local = createRequire(__filename);
const versionOf = (module: string) => (JSON.parse(readFileSync(local.resolve(`${module}/package.json`), 'utf8')) as { version: string }).version;

/** The Node 22 binary that the npm package `node` installs in ./node22. */
export function node22(): string {
  const binary = join(__dirname, 'node22', 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(binary)) throw new Error(`no Node 22 at ${binary}: run npm ci (its prepare step runs npm ci in spec/restate/support/node22)`);
  return binary;
}

export const SDKS: Record<Sdk['label'], Sdk> = {
  oldest: { label: 'oldest', module: '@restatedev/restate-sdk', version: versionOf('@restatedev/restate-sdk'), node: process.execPath },
  newest: {
    label: 'newest',
    module: 'restate-sdk-newest',
    version: versionOf('restate-sdk-newest'),
    get node() {
      return node22();
    },
  },
};
