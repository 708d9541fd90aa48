'use strict';
// L6: rx-tool-loop as users call it, each conversation's provider through `limited` on one limiter that every
// conversation shares (`maxConcurrent: 4`; the conversations run one after the other, so a slot is always free).
// What a limited call costs when it does not wait, beside the rx-tool-loop contender without it.
const { lib } = require('../lib/env.js');
const { forLibrary } = require('./rx-tool-loop.js');

module.exports = forLibrary({
  name: 'rx-tool-loop+limited',
  label: 'rx-tool-loop + limited (a free slot)',
  loadLibrary: () => lib,
  loadWrap: () => {
    const limiter = lib.createLimiter({ maxConcurrent: 4 });
    return (provider) => lib.limited(provider, limiter);
  },
});
