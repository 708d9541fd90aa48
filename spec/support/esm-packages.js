/**
 * Jest runs the specs as CommonJS, and on Node 20 it cannot `require` an ES module (Node can, jest's own module
 * system cannot). The AI SDK's packages (P18's specs: `ai/test`, `@ai-sdk/openai`, `@ai-sdk/google`) ship only
 * ES modules, so jest hands those files (named in jest.config.js) to this transform: esbuild rewrites their
 * imports and exports as CommonJS, and nothing else.
 */
const { transformSync } = require('esbuild');

module.exports = {
  process(source, path) {
    const { code, map } = transformSync(source, { format: 'cjs', target: 'node20', sourcefile: path, sourcemap: 'inline', loader: 'js' });
    return { code, map };
  },
};
