// Loaded into every thread of the agent under test by item (5) (`--require`, which sandbox workers inherit):
// every second, writes this thread's V8 heap spaces and memory usage to BENCH_PROBE_DIR/<threadId>.json.
'use strict';
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const v8 = require('node:v8');
const { threadId } = require('node:worker_threads');

const dir = process.env.BENCH_PROBE_DIR;
if (dir) {
  const write = () => {
    const spaces = {};
    for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = s.physical_space_size;
    const m = process.memoryUsage();
    writeFileSync(
      join(dir, `${threadId}.json`),
      JSON.stringify({
        at: Date.now(),
        threadId,
        spaces,
        arrayBuffers: m.arrayBuffers,
        external: m.external,
      }),
    );
  };
  setInterval(write, 1000).unref();
  write();
}
