import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerDir, nodeModulesAbove } from './consumer-dir';

describe('consumerDir (the packed package tried where only what the consumer installed resolves)', () => {
  it('finds the node_modules of any folder above, the nearest first', () => {
    const top = mkdtempSync(join(tmpdir(), 'consumer-dir-'));
    try {
      mkdirSync(join(top, 'node_modules'));
      mkdirSync(join(top, 'a', 'b'), { recursive: true });
      expect(nodeModulesAbove(join(top, 'a', 'b'))).toBe(top);
      mkdirSync(join(top, 'a', 'node_modules'));
      expect(nodeModulesAbove(join(top, 'a', 'b'))).toBe(join(top, 'a'));
    } finally {
      rmSync(top, { recursive: true, force: true });
    }
  });

  it('makes a new empty folder with no node_modules above it, passing over a temporary folder inside this checkout', () => {
    const inside = join(__dirname, '..', '..', 'node_modules', '.tmp-consumer-dir');
    mkdirSync(inside, { recursive: true });
    try {
      const made = consumerDir('consumer-dir-', [inside, tmpdir(), '/tmp']);
      expect(nodeModulesAbove(made)).toBeNull();
      expect(made.startsWith(inside)).toBe(false);
      rmSync(made, { recursive: true });
    } finally {
      rmSync(inside, { recursive: true, force: true });
    }
  });

  it('refuses when every folder it may use has a node_modules above it, naming them', () => {
    const inside = join(__dirname, '..', '..', 'node_modules');
    expect(() => consumerDir('consumer-dir-', [inside])).toThrow(/no temporary folder without a node_modules above it .*node_modules in /);
  });
});
