import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The guides of docs/ (R37), as paths relative to the repository's root. */
export const GUIDES: readonly string[] = readdirSync(resolve(__dirname, '..', '..', '..', 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);

/** The documents whose code blocks are checked (R32): the rules, the front door and the guides. */
export const DOCUMENTS: readonly string[] = ['README.md', 'CONTRACT.md', ...GUIDES];

/**
 * One fenced block of a Markdown file. `marker` is the HTML comment on the line right above the opening
 * fence, if any (`<!-- excerpt -->`, `<!-- drawn by marbles/03-delayed-tool.marble.ts -->`), without its
 * `<!--`/`-->`; `line` is the 1-based line of the first line inside the fence.
 */
export interface DocBlock {
  file: string;
  line: number;
  lang: string;
  marker: string | undefined;
  text: string;
}

/** The marker that exempts a block from every check: a part of something, not a whole that compiles or runs. */
export const EXCERPT = 'excerpt';

/** The marker of a picture of the source tree (spec/docs/src-tree.spec.ts). */
export const SRC_TREE = 'tree of src/';

export function isExcerpt(block: DocBlock): boolean {
  return block.marker === EXCERPT || block.marker?.startsWith(`${EXCERPT}:`) === true;
}

/** Every fenced block of `file` (relative to `root`), in order. A fence left open is an error. */
export function docBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\S*)\s*$/.exec(lines[index]!);
    if (open === null) continue;
    const end = lines.findIndex((line, at) => at > index && /^```\s*$/.test(line));
    if (end === -1) throw new Error(`${file}:${index + 1}: a code fence that never closes`);
    const above = index > 0 ? /^<!--\s*(.*?)\s*-->\s*$/.exec(lines[index - 1]!) : null;
    blocks.push({ file, line: index + 2, lang: open[1]!, marker: above?.[1], text: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return blocks;
}

/** `file:line` of a block's line (0-based within the block), for messages that point at the document. */
export function where(block: DocBlock, lineInBlock = 0): string {
  return `${block.file}:${block.line + lineInBlock}`;
}
